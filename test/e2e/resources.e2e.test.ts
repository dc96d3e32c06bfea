import { createHash } from "node:crypto";
import type { SessionEvent } from "@wakeloop/contracts";
import { createClient } from "@wakeloop/sdk";
import { Platform } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The agent's versioned substrate through the services: every service its own process, the sandbox
// runner with real Docker containers, the fake model scripting the resources_* tools. One session
// writes and promotes a file (a person allows it), stages it, edits it with a shell command, compares
// and promotes again; a second session of the same agent finds the new version at /workspace/agent,
// reads and restores versions; another agent and another tenant see nothing.

let platform: Platform;

beforeAll(async () => {
  platform = await Platform.start({ workers: 1, sandbox: true });
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

async function create(path: string, body: Record<string, unknown>): Promise<string> {
  const created = await platform.request("POST", path, body);
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id as string;
}

const environment = () =>
  create("/v1/environments", { name: "resources", config: { memory_mb: 256, pids_limit: 128 } });
/** shell_run runs without asking, so the only confirmations are the promotions'. */
const agent = () =>
  create("/v1/agents", {
    name: "resources",
    model: platform.fakeModel(),
    tools: [{ type: "builtin", configs: [{ name: "shell_run", permission_policy: "always_allow" }] }],
  });

async function send(sessionId: string, ...events: unknown[]): Promise<void> {
  const response = await platform.request("POST", `/v1/sessions/${sessionId}/events`, { events });
  expect(response.status, JSON.stringify(response.body)).toBe(202);
}

const say = (text: string) => ({ type: "user.message", content: [{ type: "text", text }] });
const allow = (toolUseId: string) => ({
  type: "user.tool_confirmation",
  tool_use_id: toolUseId,
  result: "allow",
});
const hash = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

type ToolUse = Extract<SessionEvent, { type: "agent.tool_use" }>;
type ToolResult = Extract<SessionEvent, { type: "agent.tool_result" }>;

/** Each tool call of a session with its result: the text, and its JSON when it parses. */
async function calls(sessionId: string) {
  const events = await platform.events(sessionId);
  return events
    .filter((event): event is ToolUse => event.type === "agent.tool_use")
    .map((use) => {
      const result = events.find(
        (event): event is ToolResult => event.type === "agent.tool_result" && event.tool_use_id === use.id,
      );
      const text = result?.content.map((block) => ("text" in block ? block.text : "")).join("") ?? "";
      let json: Record<string, unknown> | null = null;
      try {
        json = JSON.parse(text) as Record<string, unknown>;
      } catch {
        // a text result (bash, shell_run) or an error
      }
      return { use, isError: result?.is_error, text, json };
    });
}

/** Runs to `requires_action` on the named tool, allows it, and waits for the turn to end. */
async function allowAndFinish(sessionId: string, after: number, tool: string): Promise<number> {
  const paused = await platform.waitForIdle(sessionId, "requires_action", after, 90_000);
  const pending = (await calls(sessionId)).filter((call) => call.use.name === tool).at(-1);
  expect(pending?.use.evaluated_permission).toBe("ask");
  expect(paused).toMatchObject({ stop_reason: { type: "requires_action", event_ids: [pending?.use.id] } });
  await send(sessionId, allow(pending?.use.id ?? ""));
  return paused.seq;
}

describe("versioned resources", () => {
  it("stages, edits, compares and promotes with approval; another session sees it and restores", async () => {
    const env = await environment();
    const agentId = await agent();
    const first = await create("/v1/sessions", { agent: agentId, environment_id: env });

    // 1. A new substrate file: written in the workspace, promoted once a person allows it.
    platform.fake.enqueue(
      { toolCalls: [{ name: "write", input: { path: "guide.md", content: "step one\n" } }] },
      { toolCalls: [{ name: "resources_promote_to_substrate", input: { path: "guide.md" } }] },
      { text: "Promoted." },
    );
    await send(first, say("publish the guide"));
    let seq = await allowAndFinish(first, 0, "resources_promote_to_substrate");
    seq = (await platform.waitForIdle(first, "end_turn", seq, 90_000)).seq;

    // 2. Stage it into a draft, edit it with a shell command, compare, promote over the version seen.
    platform.fake.enqueue(
      {
        toolCalls: [
          {
            name: "resources_stage_from_substrate",
            input: { path: "guide.md", workspacePath: "draft/guide.md" },
          },
        ],
      },
      { toolCalls: [{ name: "shell_run", input: { command: "sed -i 's/one/two/' draft/guide.md" } }] },
      {
        toolCalls: [
          {
            name: "resources_compare_with_substrate",
            input: { path: "guide.md", workspacePath: "draft/guide.md" },
          },
        ],
      },
      {
        toolCalls: [
          {
            name: "resources_promote_to_substrate",
            input: {
              path: "guide.md",
              workspacePath: "draft/guide.md",
              expectedContentHash: hash("step one\n"),
            },
          },
        ],
      },
      { toolCalls: [{ name: "bash", input: { command: "cat /workspace/agent/guide.md" } }] },
      { text: "Revised." },
    );
    await send(first, say("revise the guide"));
    seq = await allowAndFinish(first, seq, "resources_promote_to_substrate");
    await platform.waitForIdle(first, "end_turn", seq, 90_000);

    const firstCalls = await calls(first);
    expect(firstCalls.map((call) => [call.use.name, call.isError])).toEqual([
      ["write", false],
      ["resources_promote_to_substrate", false],
      ["resources_stage_from_substrate", false],
      ["shell_run", false],
      ["resources_compare_with_substrate", false],
      ["resources_promote_to_substrate", false],
      ["bash", false],
    ]);
    const [, created, staged, , compared, promoted, shown] = firstCalls;
    expect(created?.json).toMatchObject({
      path: "guide.md",
      previousVersionId: null,
      contentHash: hash("step one\n"),
    });
    const v1 = created?.json?.versionId as string;
    expect(staged?.json).toMatchObject({ workspacePath: "/workspace/draft/guide.md", versionId: v1 });
    expect(compared?.json).toMatchObject({
      identical: false,
      latestVersionId: v1,
      expectedContentHash: hash("step one\n"),
      workspaceContentHash: hash("step two\n"),
      additions: 1,
      deletions: 1,
    });
    expect(compared?.json?.diff).toContain("-step one\n+step two");
    expect(promoted?.json).toMatchObject({ previousVersionId: v1, author: { sessionId: first } });
    const v2 = promoted?.json?.versionId as string;
    expect(shown?.text).toContain("step two");
    // The ledger: each promotion waited for its allow, then ran once.
    const ledger = await platform.db
      .selectFrom("tool_calls")
      .select(["name", "status"])
      .where("session_id", "=", first)
      .where("name", "=", "resources_promote_to_substrate")
      .execute();
    expect(ledger.map((row) => row.status)).toEqual(["succeeded", "succeeded"]);

    // 3. A second session of the agent: the latest version is at /workspace/agent from its first
    // command; it lists and reads the versions and restores the first (no confirmation by default).
    const second = await create("/v1/sessions", { agent: agentId, environment_id: env });
    platform.fake.enqueue(
      { toolCalls: [{ name: "bash", input: { command: "cat /workspace/agent/guide.md" } }] },
      { toolCalls: [{ name: "resources_list_versions", input: { path: "guide.md" } }] },
      { toolCalls: [{ name: "resources_read_version", input: { versionId: v1 } }] },
      { toolCalls: [{ name: "resources_restore_version", input: { versionId: v1, expectedVersionId: v2 } }] },
      { toolCalls: [{ name: "resources_restore_version", input: { versionId: v1, expectedVersionId: v2 } }] },
      { toolCalls: [{ name: "bash", input: { command: "cat /workspace/agent/guide.md" } }] },
      { text: "Rolled back." },
    );
    await send(second, say("roll the guide back"));
    await platform.waitForIdle(second, "end_turn", 0, 90_000);
    const [seen, listed, read, restored, stale, after] = await calls(second);
    expect(seen?.text).toContain("step two");
    expect(listed?.json).toMatchObject({ latestVersionId: v2 });
    expect(
      ((listed?.json?.versions ?? []) as Array<{ versionId: string }>).map((version) => version.versionId),
    ).toEqual([v2, v1]);
    expect(read?.json).toMatchObject({ versionId: v1, content: "step one\n" });
    expect(restored).toMatchObject({
      isError: false,
      json: { restoredFromVersionId: v1, previousVersionId: v2 },
    });
    // The same precondition a second time is stale: nothing is written.
    expect(stale?.isError).toBe(true);
    expect(stale?.text).toContain("substrate_version_conflict");
    expect(after?.text).toContain("step one");

    // 4. People see the same history through the API (the SDK), and roll back there too.
    const client = createClient({ baseUrl: platform.baseUrl, apiKey: platform.apiKey });
    const versions = (await client.resources.versions(agentId, "guide.md")).data;
    expect(versions.map((version) => version.author.session_id)).toEqual([second, first, first]);
    expect(versions[2]?.id).toBe(v1);
    expect((await client.resources.version(agentId, v2)).content).toBe("step two\n");
    const rolled = await client.resources.restore(agentId, v2, {
      expected_version_id: versions[0]?.id ?? "",
    });
    expect(rolled).toMatchObject({ restored_from_version_id: v2, author: { kind: "api" } });
    expect(await client.resources.list(agentId)).toMatchObject({
      data: [{ path: "guide.md", version_id: rolled.id, content_hash: hash("step two\n") }],
      total_bytes: 9,
    });
    // The second session's sandbox is running: the gateway's notice makes its runner sync at once.
    platform.fake.enqueue(
      { toolCalls: [{ name: "bash", input: { command: "cat /workspace/agent/guide.md" } }] },
      { text: "Read it." },
    );
    const idle = (await platform.events(second)).at(-1)?.seq ?? 0;
    await send(second, say("read the guide again"));
    await platform.waitForIdle(second, "end_turn", idle, 90_000);
    expect((await calls(second)).at(-1)?.text).toContain("step two");

    // 5. Another agent of the tenant has an empty substrate; another tenant gets a 404.
    const stranger = await create("/v1/sessions", { agent: await agent(), environment_id: env });
    platform.fake.enqueue(
      { toolCalls: [{ name: "ls", input: { path: "agent" } }] },
      { toolCalls: [{ name: "resources_list_versions", input: { path: "guide.md" } }] },
      { text: "Nothing there." },
    );
    await send(stranger, say("look at the guide"));
    await platform.waitForIdle(stranger, "end_turn", 0, 90_000);
    const [listing, none] = await calls(stranger);
    expect(listing?.text).toBe("(empty directory)");
    expect(none).toMatchObject({ isError: true, text: expect.stringContaining("resource_not_found") });
    const other = await platform.createTenant("resources-other");
    const hidden = await platform.request("GET", `/v1/agents/${agentId}/resources`, undefined, {
      authorization: `Bearer ${other.apiKey}`,
    });
    expect(hidden.status).toBe(404);
  }, 300_000);

  it("holds promotion and restore back while an active outcome's evaluator says it is not ready", async () => {
    const agentId = await agent();
    const id = await create("/v1/sessions", { agent: agentId, environment_id: await environment() });
    platform.fake.enqueue(
      { toolCalls: [{ name: "write", input: { path: "plan.md", content: "draft\n" } }] },
      {
        toolCalls: [
          { name: "outcome_define", input: { title: "Ship the plan", criteria: ["the plan is reviewed"] } },
        ],
      },
      { toolCalls: [{ name: "permissions_check", input: { tool_name: "resources_promote_to_substrate" } }] },
      { toolCalls: [{ name: "resources_promote_to_substrate", input: { path: "plan.md" } }] },
      { toolCalls: [{ name: "resources_restore_version", input: { versionId: "subv_none" } }] },
      { text: "Waiting for review." },
    );
    await send(id, say("ship the plan"));
    await platform.waitForIdle(id, "end_turn", 0, 90_000);
    const [, , check, promote, restore] = await calls(id);
    expect(check?.json).toMatchObject({
      tool: "resources_promote_to_substrate",
      requires_confirmation: true,
      evaluator_gated: true,
      blocked_by_evaluator: true,
      next_outcome_step: "outcome_evaluate",
    });
    // Refused at planning, without asking anyone and without writing.
    for (const gated of [promote, restore]) {
      expect(gated?.use.evaluated_permission).toBe("deny");
      expect(gated).toMatchObject({ isError: true, text: expect.stringContaining("gated on the evaluator") });
    }
    const files = await platform.request("GET", `/v1/agents/${agentId}/resources`);
    expect(files.body).toMatchObject({ data: [], total_bytes: 0 });
  }, 300_000);
});
