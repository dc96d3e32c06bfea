import type { SessionEvent } from "@wakeloop/contracts";
import { Platform } from "@wakeloop/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Memory through the services (issue #10): tool calls of one session land in the memory-retrieval
// service and are found by a later session of the same agent, never by another agent or tenant; a
// stale write fails cleanly; killing the service mid-write loses nothing and writes nothing twice.

let platform: Platform;

beforeAll(async () => {
  platform = await Platform.start({
    workers: 1,
    // A reply lost with a killed replica is given up on quickly, then the call is sent again.
    workerEnv: { MEMORY_TIMEOUT_MS: "2000" },
  });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

type Auth = Record<string, string>;

async function agent(auth: Auth = {}): Promise<string> {
  const created = await platform.request(
    "POST",
    "/v1/agents",
    { name: "memory e2e", model: platform.fakeModel(), system: "You are a test agent." },
    auth,
  );
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id as string;
}

/** Runs one turn of a new session of `agentId` with the scripted tool calls, and returns its events. */
async function turn(
  agentId: string,
  calls: Array<{ name: string; input: Record<string, unknown> }>,
  auth: Auth = {},
): Promise<SessionEvent[]> {
  platform.fake.enqueue({ toolCalls: calls }, { text: "done" });
  const created = await platform.request("POST", "/v1/sessions", { agent: agentId }, auth);
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const id = created.body.id as string;
  const say = { events: [{ type: "user.message", content: [{ type: "text", text: "go" }] }] };
  expect((await platform.request("POST", `/v1/sessions/${id}/events`, say, auth)).status).toBe(202);
  await waitForIdle(id, auth);
  const page = await platform.request("GET", `/v1/sessions/${id}/events?limit=1000`, undefined, auth);
  return page.body.data as SessionEvent[];
}

async function waitForIdle(sessionId: string, auth: Auth): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const page = await platform.request(
      "GET",
      `/v1/sessions/${sessionId}/events?limit=1000`,
      undefined,
      auth,
    );
    const events = page.body.data as SessionEvent[];
    if (events.some((event) => event.type === "session.status_idle")) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`session ${sessionId} did not go idle`);
}

/** The parsed results of the turn's tool calls, in order. */
function results(events: SessionEvent[]): Array<{ isError: boolean; body: Record<string, unknown> }> {
  return events.flatMap((event) => {
    if (event.type !== "agent.tool_result") return [];
    const text = event.content.map((block) => ("text" in block ? block.text : "")).join("");
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text);
    } catch {
      body = { text };
    }
    return [{ isError: event.is_error, body }];
  });
}

const notesPath = (agentId: string, query: string) =>
  `/v1/agents/${agentId}/memory/workspace_memory_notes/${query}`;

describe("memory through the services", () => {
  let shared: string;

  it("session A writes memory and a skill; session B of the same agent finds and reads them", async () => {
    shared = await agent();
    const a = await turn(shared, [
      {
        name: "memory_write",
        input: { target: "deploy.md", content: "Deploys use the blue-green script in ops/deploy.sh." },
      },
      {
        name: "create_skill",
        input: {
          name: "rollback",
          description: "How to roll back a deploy",
          content: "1. run ops/rollback.sh",
        },
      },
    ]);
    expect(results(a).map((result) => result.isError)).toEqual([false, false]);
    const written = results(a)[0]?.body.version_id as string;

    // A person corrects the note through the API: session B's copy of the first version is now stale.
    const corrected = await platform.request("PUT", notesPath(shared, "entry?target=deploy.md"), {
      content: "Deploys use the blue-green script in ops/deploy.sh (needs the VPN).",
      expected_version_id: written,
    });
    expect(corrected.status, JSON.stringify(corrected.body)).toBe(200);

    const before = platform.fake.requests.length;
    const b = await turn(shared, [
      { name: "memory_search", input: { query: "blue-green deploy" } },
      { name: "skills_search", input: { query: "roll back" } },
      { name: "memory_read", input: { target: "deploy.md" } },
      { name: "skills_read", input: { name: "rollback" } },
      {
        name: "memory_write",
        input: { target: "deploy.md", content: "stale overwrite", expected_version_id: written },
      },
    ]);
    const [search, skills, read, skill, stale] = results(b);
    expect(search?.body.hits).toEqual([
      expect.objectContaining({ store: "workspace_memory_notes", target: "deploy.md" }),
    ]);
    expect(skills?.body.skills).toEqual([expect.objectContaining({ name: "rollback" })]);
    expect(read?.body.content).toContain("needs the VPN");
    expect(skill?.body.content).toBe("1. run ops/rollback.sh");
    expect(stale?.isError).toBe(true);
    expect(JSON.stringify(stale?.body)).toContain("memory_version_conflict");
    const entry = await platform.request("GET", notesPath(shared, "entry?target=deploy.md"));
    expect(entry.body.content).toContain("needs the VPN");

    // The skills index is in the system context of B's wake.
    const request = JSON.stringify(platform.fake.requests[before]?.body);
    expect(request).toContain("rollback: How to roll back a deploy");
  }, 90_000);

  it("another agent and another tenant find nothing", async () => {
    const calls = [
      { name: "memory_search", input: { query: "blue-green deploy" } },
      { name: "skills_search", input: { query: "roll back" } },
    ];
    const sibling = results(await turn(await agent(), calls));
    expect(sibling.map((result) => result.body)).toEqual([
      expect.objectContaining({ hits: [] }),
      expect.objectContaining({ skills: [] }),
    ]);
    const other = await platform.createTenant("memory other");
    const auth = { authorization: `Bearer ${other.apiKey}` };
    const foreign = results(await turn(await agent(auth), calls, auth));
    expect(foreign.map((result) => result.body)).toEqual([
      expect.objectContaining({ hits: [] }),
      expect.objectContaining({ skills: [] }),
    ]);
    // Nor through the API: the agent is not the other tenant's.
    expect((await platform.request("GET", `/v1/agents/${shared}/memory`, undefined, auth)).status).toBe(404);
  }, 90_000);

  it("kill -9 of the memory service during a write loses nothing and writes once", async () => {
    const agentId = await agent();
    const tenant = platform.tenantId;
    // Hold the store's write lock so the service's write waits inside its transaction, then kill it there.
    let release: () => void = () => undefined;
    const held = platform.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`${tenant}/${agentId}/workspace_memory_notes`}, 0))`.execute(
        trx,
      );
      await new Promise<void>((resolve) => {
        release = resolve;
      });
    });
    const events = turn(agentId, [
      { name: "memory_write", input: { target: "kill.md", content: "survives" } },
    ]);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const waiting = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM pg_locks
        WHERE locktype = 'advisory' AND NOT granted
          -- pg_locks spans the cluster: only this test's database counts (other tests hold their own).
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`.execute(
        platform.db,
      );
      if ((waiting.rows[0]?.n ?? 0) > 0) break;
      if (Date.now() > deadline) throw new Error("the memory write never reached the store lock");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    platform.app("memory-retrieval").kill("SIGKILL");
    await platform.app("memory-retrieval").exitCode(10_000);
    release();
    await held;
    await platform.restartApp("memory-retrieval");

    const [result] = results(await events);
    expect(result?.isError).toBe(false);
    const versions = await platform.request("GET", notesPath(agentId, "versions?target=kill.md"));
    expect(versions.body.data).toHaveLength(1);
    expect(versions.body.data[0]).toMatchObject({ content: "survives", author: { kind: "tool" } });
    const recorded = await platform.db
      .selectFrom("memory_tool_calls")
      .select("tool_call_id")
      .where("tool_call_id", "=", versions.body.data[0].author.tool_call_id)
      .execute();
    expect(recorded).toHaveLength(1);
  }, 120_000);
});
