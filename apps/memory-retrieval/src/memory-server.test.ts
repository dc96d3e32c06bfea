import { trace } from "@opentelemetry/api";
import { type Bus, connectBus } from "@wakeloop/bus";
import type { MemoryExecuteRequest } from "@wakeloop/contracts";
import { createMemoryClient, type MemoryClient } from "@wakeloop/memory-client";
import { createLogger } from "@wakeloop/telemetry";
import {
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  type TestDatabase,
  testNatsUrl,
  testPrefix,
} from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMemoryServer } from "./memory-server";

let testDb: TestDatabase;
let agent: SeededAgent;
let stranger: SeededAgent;
let buses: Bus[];
let replicas: Array<{ stop(): Promise<void> }>;
let client: MemoryClient;
let calls = 0;

const limits = { maxEntryBytes: 4_096, maxStoreBytes: 16_384 };

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 8 });
  agent = await seedAgent(testDb.db);
  stranger = await seedAgent(testDb.db);
  const prefix = testPrefix();
  buses = await Promise.all(
    ["client", "replica-a", "replica-b"].map((name) => connectBus({ servers: testNatsUrl(), prefix, name })),
  );
  const log = createLogger({ service: "memory-test", level: "silent" });
  // Two replicas in one queue group, sharing nothing but Postgres.
  replicas = (buses.slice(1) as Bus[]).map((bus, index) =>
    startMemoryServer({
      bus,
      db: testDb.appDb,
      tracer: trace.getTracer("memory-test"),
      log,
      limits,
      replicaId: `replica-${index}`,
    }),
  );
  await Promise.all(buses.map((bus) => bus.nc.flush()));
  client = createMemoryClient(buses[0] as Bus);
});

afterAll(async () => {
  await Promise.all(replicas.map((replica) => replica.stop()));
  await Promise.all(buses.map((bus) => bus.close()));
  await testDb.drop();
});

function call(
  tool: MemoryExecuteRequest["tool"],
  input: unknown,
  options: { owner?: SeededAgent; toolCallId?: string; sessionId?: string } = {},
) {
  const owner = options.owner ?? agent;
  calls += 1;
  return client.execute({
    tenant_id: owner.tenantId,
    agent_id: owner.agentId,
    session_id: options.sessionId ?? "sesn_one",
    wake_id: "wake_one",
    tool_call_id: options.toolCallId ?? `tcall_${calls}`,
    tool,
    input,
  });
}

const json = (response: { result: Record<string, unknown> }) => response.result;

describe("memory service", () => {
  it("answers readiness pings", async () => {
    expect(await client.ready()).toBe(true);
    const nobody = createMemoryClient(
      await connectBus({ servers: testNatsUrl(), prefix: testPrefix(), name: "nobody" }).then((bus) => {
        buses.push(bus);
        return bus;
      }),
      { pingTimeoutMs: 200 },
    );
    expect(await nobody.ready()).toBe(false);
  });

  it("writes, reads and searches memory; a retried call id replays and writes once", async () => {
    const write = await call(
      "memory_write",
      { target: "release.md", content: "Cut releases from the staging branch after the smoke suite." },
      { toolCallId: "tcall_release" },
    );
    expect(write.is_error).toBe(false);
    const again = await call(
      "memory_write",
      { target: "release.md", content: "other" },
      { toolCallId: "tcall_release" },
    );
    expect(again).toMatchObject({ replayed: true, result: write.result });
    const versions = await call("memory_list_versions", { target: "release.md" });
    expect(json(versions).versions).toHaveLength(1);

    const search = await call("memory_search", { query: "smoke suite" });
    expect(json(search).hits).toEqual([
      expect.objectContaining({
        store: "workspace_memory_notes",
        target: "release.md",
        next_step: { tool: "memory_read", input: { store: "workspace_memory_notes", target: "release.md" } },
      }),
    ]);
    const read = await call("memory_read", { target: "release.md" });
    expect(json(read)).toMatchObject({ content: expect.stringContaining("staging branch") });
    // Another tenant's agent finds nothing.
    expect(json(await call("memory_search", { query: "smoke suite" }, { owner: stranger })).hits).toEqual([]);
  });

  it("fails a stale expected_version_id cleanly, as an error result", async () => {
    const first = await call("memory_write", { target: "plan.md", content: "v1" });
    const id = json(first).version_id;
    await call("memory_write", { target: "plan.md", content: "v2", expected_version_id: id });
    const stale = await call("memory_write", { target: "plan.md", content: "v3", expected_version_id: id });
    expect(stale.is_error).toBe(true);
    expect(json(stale)).toMatchObject({ error: { code: "memory_version_conflict" } });
    expect(json(await call("memory_read", { target: "plan.md" })).content).toBe("v2");
  });

  it("refuses bad input, reserved stores and oversized entries without writing", async () => {
    expect(json(await call("memory_write", { target: "", content: "x" })).error).toMatchObject({
      code: "memory_invalid_input",
    });
    expect(
      json(await call("memory_write", { store: "workspace_memory", target: "x", content: "x" })).error,
    ).toMatchObject({ code: "memory_store_read_only" });
    expect(
      json(await call("memory_write", { target: "big", content: "x".repeat(5_000) })).error,
    ).toMatchObject({
      code: "memory_entry_too_large",
    });
    expect(json(await call("memory_read", { target: "big" })).error).toMatchObject({
      code: "memory_not_found",
    });
  });

  it("promotes notes into the shared MEMORY.md", async () => {
    await call("memory_promote_note", { note: "Staging deploys need the VPN." });
    await call("memory_promote_note", { note: "Tests need Postgres 16." });
    const shared = await call("memory_read", { store: "workspace_memory", target: "MEMORY.md" });
    expect(json(shared).content).toBe("Staging deploys need the VPN.\n\nTests need Postgres 16.");
  });

  it("says whether recall could find anything: not for skills and notepads alone", async () => {
    const fresh = await seedAgent(testDb.db);
    const context = () => client.context(fresh.tenantId, fresh.agentId);
    expect(await context()).toEqual({ skills: [], recallable: false });
    await call(
      "create_skill",
      { name: "deploy", description: "How to deploy", content: "run deploy.sh" },
      { owner: fresh },
    );
    await call("write_notepad", { content: "scratch" }, { owner: fresh });
    expect(await context()).toEqual({
      skills: [{ name: "deploy", description: "How to deploy" }],
      recallable: false,
    });
    await call("memory_write", { target: "notes.md", content: "The VPN is needed." }, { owner: fresh });
    expect((await context()).recallable).toBe(true);
    // Asked under another tenant, the same agent id sees none of it.
    expect(await client.context(stranger.tenantId, fresh.agentId)).toEqual({ skills: [], recallable: false });
  });

  it("keeps skills versioned, indexed when enabled, and searchable", async () => {
    const created = await call("create_skill", {
      name: "release-checklist",
      description: "Steps to cut a release",
      content: "1. run the smoke suite\n2. tag\n3. publish the changelog",
    });
    expect(created.is_error).toBe(false);
    const duplicate = await call("create_skill", {
      name: "release-checklist",
      description: "x",
      content: "y",
    });
    expect(json(duplicate).error).toMatchObject({ code: "memory_skill_exists" });
    expect((await client.context(agent.tenantId, agent.agentId)).skills).toEqual([
      { name: "release-checklist", description: "Steps to cut a release" },
    ]);
    const hits = json(await call("skills_search", { query: "changelog" })).skills;
    expect(hits).toEqual([expect.objectContaining({ name: "release-checklist" })]);
    await call("disable_skill", { name: "release-checklist" });
    expect((await client.context(agent.tenantId, agent.agentId)).skills).toEqual([]);
    expect(json(await call("skills_search", { query: "changelog" })).skills).toEqual([]);
    await call("enable_skill", { name: "release-checklist" });
    await call("update_skill", { name: "release-checklist", content: "1. run everything" });
    expect(json(await call("skills_read", { name: "release-checklist" }))).toMatchObject({
      content: "1. run everything",
      description: "Steps to cut a release",
      enabled: true,
    });
    const versions = json(
      await call("memory_list_versions", { store: "skills", target: "release-checklist" }),
    );
    expect(versions.versions).toHaveLength(4);
    await call("delete_skill", { name: "release-checklist" });
    expect(json(await call("skills_list", {})).skills).toEqual([]);
  });

  it("keeps one notepad per session with surgical edits", async () => {
    const own = { sessionId: "sesn_pad" };
    expect(json(await call("read_notepad", {}, own))).toEqual({ content: "", version_id: null });
    await call("write_notepad", { content: "todo: a" }, own);
    await call("update_notepad", { operation: "append", text: "todo: b" }, own);
    await call("update_notepad", { operation: "find_replace", find: "todo: a", text: "done: a" }, own);
    const missing = await call("update_notepad", { operation: "delete", find: "nope" }, own);
    expect(json(missing).error).toMatchObject({ code: "memory_edit_no_unique_match" });
    expect(json(await call("read_notepad", {}, own)).content).toBe("done: a\ntodo: b");
    expect(json(await call("read_notepad", {}, { sessionId: "sesn_other" })).content).toBe("");
  });

  it("captures a learning once per key and lists it", async () => {
    const capture = {
      tenant_id: agent.tenantId,
      agent_id: agent.agentId,
      session_id: "sesn_one",
      wake_id: "wake_one",
      key: "loop:wake_one",
      text: "Polling the build without a change made no progress.",
    };
    const first = await client.captureLearning(capture);
    expect(first.captured).toBe(true);
    expect(await client.captureLearning(capture)).toEqual({ version_id: first.version_id, captured: false });
    expect(json(await call("learning_list", {})).learnings).toEqual([
      expect.objectContaining({ key: "loop:wake_one", text: capture.text }),
    ]);
  });

  it("recalls the entries matching any word of a wake's input, with their content, never skills or notepads", async () => {
    await call("memory_write", { target: "kiwi.md", content: "The kiwi mirror syncs nightly at 02:00." });
    await call("write_notepad", { content: "kiwi notepad scribbles" }, { sessionId: "sesn_kiwi" });
    await call("create_skill", { name: "kiwi-sync", description: "kiwi mirror", content: "kiwi" });
    const request = { tenant_id: agent.tenantId, agent_id: agent.agentId, limit: 5 };
    // A question holding words no entry has still finds the one holding some of them.
    const { hits } = await client.recall({ ...request, text: "When does the kiwi mirror run?" }, 5_000);
    expect(hits).toEqual([
      expect.objectContaining({
        store: "workspace_memory_notes",
        target: "kiwi.md",
        content: "The kiwi mirror syncs nightly at 02:00.",
      }),
    ]);
    expect((await client.recall({ ...request, text: "ok ?" }, 5_000)).hits).toEqual([]);
    const foreign = { ...request, tenant_id: stranger.tenantId, agent_id: stranger.agentId };
    expect((await client.recall({ ...foreign, text: "kiwi mirror" }, 5_000)).hits).toEqual([]);
  });
});
