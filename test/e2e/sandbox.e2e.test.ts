import type { SessionEvent } from "@wakeloop/contracts";
import { Platform } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Sandbox tools through the public API: every service its own process (the sandbox-runner with real
// Docker containers included), two harness workers, the fake model scripting the tool calls. Each test
// makes its own environment, agent and session.

let platform: Platform;

beforeAll(async () => {
  platform = await Platform.start({
    workers: 2,
    sandbox: true,
    env: { LEASE_SWEEP_INTERVAL_MS: "200", WAKE_REPUBLISH_AFTER_MS: "2000" },
    workerEnv: { LEASE_TTL_MS: "1500" },
  });
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

async function environment(config: Record<string, unknown> = {}): Promise<string> {
  const created = await platform.request("POST", "/v1/environments", {
    name: "e2e sandbox",
    config: { memory_mb: 256, pids_limit: 128, ...config },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id as string;
}

async function agent(spec: Record<string, unknown> = {}): Promise<string> {
  const created = await platform.request("POST", "/v1/agents", {
    name: "e2e sandbox",
    model: platform.fakeModel(),
    ...spec,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id as string;
}

/** An agent whose named sandbox tools run without a person's confirmation. */
const allowing = (...names: string[]) => ({
  tools: [{ type: "builtin", configs: names.map((name) => ({ name, permission_policy: "always_allow" })) }],
});

async function session(agentId: string, environmentId: string): Promise<string> {
  const created = await platform.request("POST", "/v1/sessions", {
    agent: agentId,
    environment_id: environmentId,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id as string;
}

async function send(sessionId: string, ...events: unknown[]): Promise<void> {
  const response = await platform.request("POST", `/v1/sessions/${sessionId}/events`, { events });
  expect(response.status, JSON.stringify(response.body)).toBe(202);
}

const say = (text: string) => ({ type: "user.message", content: [{ type: "text", text }] });
const confirm = (toolUseId: string, result: "allow" | "deny", denyMessage?: string) => ({
  type: "user.tool_confirmation",
  tool_use_id: toolUseId,
  result,
  ...(denyMessage !== undefined && { deny_message: denyMessage }),
});
const textOf = (event: SessionEvent | undefined) =>
  event && "content" in event
    ? event.content.map((block) => ("text" in block ? block.text : "")).join("")
    : "";

type ToolUse = Extract<SessionEvent, { type: "agent.tool_use" }>;
type ToolResult = Extract<SessionEvent, { type: "agent.tool_result" }>;
const toolUses = (events: SessionEvent[]) =>
  events.filter((event): event is ToolUse => event.type === "agent.tool_use");
const toolUse = (events: SessionEvent[], name: string, nth = 0): ToolUse => {
  const found = toolUses(events).filter((event) => event.name === name)[nth];
  if (!found) throw new Error(`no tool use ${nth} of ${name}: ${JSON.stringify(events.map((e) => e.type))}`);
  return found;
};
const resultOf = (events: SessionEvent[], use: ToolUse): ToolResult | undefined =>
  events.find(
    (event): event is ToolResult => event.type === "agent.tool_result" && event.tool_use_id === use.id,
  );

/** Every event once, seqs gapless from 1. */
function expectWellFormed(events: SessionEvent[]) {
  expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
  expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
}

async function ledger(sessionId: string) {
  return platform.db
    .selectFrom("tool_calls")
    .select(["id", "name", "status", "result"])
    .where("session_id", "=", sessionId)
    .orderBy("created_at")
    .execute();
}

describe("sandbox sessions", () => {
  it("writes a file, runs a command once it is allowed, and reads what the command wrote", async () => {
    const id = await session(await agent(), await environment());
    const before = platform.fake.requests.length;
    platform.fake.enqueue(
      {
        toolCalls: [{ name: "write", input: { path: "notes/hello.txt", content: "hello from the model\n" } }],
      },
      {
        toolCalls: [
          {
            name: "shell_run",
            input: { command: "wc -c < notes/hello.txt > notes/size.txt && echo counted-$((6*7))" },
          },
        ],
      },
      { toolCalls: [{ name: "read", input: { path: "notes/size.txt" } }] },
      { text: "The file has 21 bytes." },
    );
    await send(id, say("count the bytes of a note"));

    // shell_run is always_ask: the session pauses before anything runs it.
    const paused = await platform.waitForIdle(id, "requires_action", 0, 60_000);
    let events = await platform.events(id);
    const statuses = events.flatMap((event) => (event.type === "sandbox.status" ? [event.status] : []));
    expect(statuses).toEqual(["provisioning", "ready"]);
    const readyAt = events.find((event) => event.type === "sandbox.status" && event.status === "ready");
    expect(readyAt?.seq).toBeLessThan(toolUse(events, "write").seq);
    expect(resultOf(events, toolUse(events, "write"))).toMatchObject({ is_error: false });
    const run = toolUse(events, "shell_run");
    expect(run.evaluated_permission).toBe("ask");
    expect(paused).toMatchObject({ stop_reason: { type: "requires_action", event_ids: [run.id] } });
    expect((await ledger(id)).find((row) => row.id === run.id)?.status).toBe("planned");
    expect(await platform.sandboxContainers(id)).toHaveLength(1);

    await send(id, confirm(run.id, "allow"));
    await platform.waitForIdle(id, "end_turn", paused.seq, 60_000);
    events = await platform.events(id);
    expectWellFormed(events);
    const ran = resultOf(events, run);
    expect(ran?.is_error).toBe(false);
    expect(textOf(ran)).toContain("counted-42");
    const read = resultOf(events, toolUse(events, "read"));
    expect(read?.is_error).toBe(false);
    expect(textOf(read)).toMatch(/\t21$/m);
    expect((await ledger(id)).map((row) => [row.name, row.status])).toEqual([
      ["write", "succeeded"],
      ["shell_run", "succeeded"],
      ["read", "succeeded"],
    ]);
    // The model saw each result in the request after its call.
    const seen = platform.fake.requests.slice(before).flatMap((request) => request.view?.toolResults ?? []);
    expect(seen.map((result) => [result.name, result.isError])).toEqual([
      ["write", false],
      ["shell_run", false],
      ["read", false],
    ]);
    expect(seen[1]?.text).toContain("counted-42");
  }, 120_000);

  it("never runs a command the user denied", async () => {
    const id = await session(await agent(), await environment());
    platform.fake.enqueue(
      {
        toolCalls: [
          { name: "write", input: { path: "kept.txt", content: "kept\n" } },
          { name: "shell_run", input: { command: "touch /workspace/denied.txt" } },
        ],
      },
      { toolCalls: [{ name: "ls", input: {} }] },
      { text: "Left it alone." },
    );
    await send(id, say("touch a file"));
    const paused = await platform.waitForIdle(id, "requires_action", 0, 60_000);
    const run = toolUse(await platform.events(id), "shell_run");
    await send(id, confirm(run.id, "deny", "not this file"));
    await platform.waitForIdle(id, "end_turn", paused.seq, 60_000);

    const events = await platform.events(id);
    expectWellFormed(events);
    expect(resultOf(events, run)).toMatchObject({
      is_error: true,
      content: [{ type: "text", text: "not this file" }],
    });
    const listing = textOf(resultOf(events, toolUse(events, "ls")));
    expect(listing).toContain("kept.txt");
    expect(listing).not.toContain("denied.txt");
    expect((await ledger(id)).find((row) => row.id === run.id)?.status).toBe("failed");
  }, 120_000);

  it("rejects a command the environment's exec policy denies, at plan time", async () => {
    const env = await environment({ exec_security: "allowlist", exec_allowlist: ["echo"], exec_ask: "off" });
    const id = await session(await agent(allowing("shell_run")), env);
    platform.fake.enqueue(
      {
        toolCalls: [
          { name: "shell_run", input: { command: "touch /workspace/policy.txt" } },
          { name: "shell_run", input: { command: "echo allowed-ok" } },
        ],
      },
      { toolCalls: [{ name: "ls", input: {} }] },
      { text: "One ran." },
    );
    await send(id, say("try two commands"));
    await platform.waitForIdle(id, "end_turn", 0, 60_000);

    const events = await platform.events(id);
    expectWellFormed(events);
    expect(
      events.some((event) => event.type === "session.status_idle" && event.stop_reason.type !== "end_turn"),
    ).toBe(false);
    const denied = toolUse(events, "shell_run", 0);
    expect(denied.evaluated_permission).toBe("deny");
    const refusal = resultOf(events, denied);
    expect(refusal?.is_error).toBe(true);
    expect(textOf(refusal)).toBe(
      "The command was not run: the command is not on the environment's exec allowlist and exec_ask=off, so it is denied.",
    );
    const allowed = toolUse(events, "shell_run", 1);
    expect(allowed.evaluated_permission).toBe("allow");
    expect(textOf(resultOf(events, allowed))).toContain("allowed-ok");
    expect(textOf(resultOf(events, toolUse(events, "ls")))).not.toContain("policy.txt");
    // The denied call never reached the ledger: it was never going to run.
    expect((await ledger(id)).map((row) => row.id)).not.toContain(denied.id);
  }, 120_000);

  it("turns an exec-policy ask into requires_action, and runs the command once it is allowed", async () => {
    const env = await environment({
      exec_security: "allowlist",
      exec_allowlist: ["echo", "cat"],
      exec_ask: "on-miss",
    });
    const id = await session(await agent(allowing("shell_exec")), env);
    platform.fake.enqueue(
      { toolCalls: [{ name: "shell_exec", input: { command: "echo on-the-list" } }] },
      { toolCalls: [{ name: "shell_exec", input: { command: "touch asked.txt && echo touched" } }] },
      { toolCalls: [{ name: "ls", input: {} }] },
      { text: "Touched after approval." },
    );
    await send(id, say("run two commands"));
    const paused = await platform.waitForIdle(id, "requires_action", 0, 60_000);

    let events = await platform.events(id);
    const listed = toolUse(events, "shell_exec", 0);
    expect(listed.evaluated_permission).toBe("allow");
    expect(textOf(resultOf(events, listed))).toContain("on-the-list");
    const asked = toolUse(events, "shell_exec", 1);
    expect(asked.evaluated_permission).toBe("ask");
    expect(paused).toMatchObject({ stop_reason: { type: "requires_action", event_ids: [asked.id] } });
    const pending = await platform.request("GET", `/v1/sessions/${id}/pending`);
    expect(pending.body.data).toEqual([
      expect.objectContaining({ event_id: asked.id, kind: "tool_confirmation", name: "shell_exec" }),
    ]);
    expect((await ledger(id)).find((row) => row.id === asked.id)?.status).toBe("planned");

    await send(id, confirm(asked.id, "allow"));
    await platform.waitForIdle(id, "end_turn", paused.seq, 60_000);
    events = await platform.events(id);
    expectWellFormed(events);
    const ran = resultOf(events, asked);
    expect(ran?.is_error).toBe(false);
    expect(textOf(ran)).toContain("touched");
    expect(textOf(resultOf(events, toolUse(events, "ls")))).toContain("asked.txt");
  }, 120_000);

  it("answers 'outcome unknown' instead of re-running a non-idempotent call whose worker was killed", async () => {
    const id = await session(
      await agent({ model: platform.fakeModel("anthropic"), ...allowing("shell_exec") }),
      await environment(),
    );
    const before = platform.fake.requests.length;
    platform.fake.enqueue(
      { toolCalls: [{ name: "shell_exec", input: { command: "sleep 4; echo x >> /workspace/count.txt" } }] },
      { text: "I could not tell whether it ran." },
    );
    await send(id, say("append once"));

    // The call is marked running before it is sent to the runner; give the request time to arrive.
    await expect
      .poll(async () => (await ledger(id)).find((row) => row.name === "shell_exec")?.status, {
        timeout: 60_000,
        interval: 50,
      })
      .toBe("running");
    const startedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const wake = await platform.db
      .selectFrom("wakes")
      .select("worker_id")
      .where("session_id", "=", id)
      .where("status", "=", "running")
      .executeTakeFirstOrThrow();
    const workerName = wake.worker_id ?? "";
    const victim = platform.app(workerName);
    victim.kill("SIGKILL");
    await victim.exited;

    const idle = await platform.waitForIdle(id, "end_turn", 0, 60_000);
    let events = await platform.events(id);
    expectWellFormed(events);
    expect(events.map((event) => event.type)).toContain("session.status_rescheduled");
    const call = toolUse(events, "shell_exec");
    const results = events.filter(
      (event) => event.type === "agent.tool_result" && event.tool_use_id === call.id,
    );
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ is_error: true });
    expect(textOf(results[0])).toContain("not idempotent, so it was not run again");
    expect((await ledger(id)).find((row) => row.id === call.id)?.status).toBe("unknown");
    // What the model was sent after the crash (asserted last: the file checks above do not depend on it).
    const told = platform.fake.requests.slice(before).flatMap((request) => request.view?.toolResults ?? []);
    await platform.startWorker(workerName);

    // The first run goes on in the container after its requester died; once it is done, the file holds
    // exactly its one line: the call was neither lost nor repeated.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, startedAt + 5_000 - Date.now())));
    platform.fake.enqueue(
      { toolCalls: [{ name: "read", input: { path: "count.txt" } }] },
      { text: "One line." },
    );
    await send(id, say("how many lines now?"));
    await platform.waitForIdle(id, "end_turn", idle.seq, 60_000);
    events = await platform.events(id);
    expectWellFormed(events);
    const read = resultOf(events, toolUse(events, "read"));
    expect(read?.is_error).toBe(false);
    expect(textOf(read)).toMatch(/\tx$/m);
    expect((await ledger(id)).find((row) => row.name === "read")?.result).toMatchObject({
      totalLineCount: 1,
    });
    // The model was told, as an error result, that the outcome is unknown.
    expect(told).toEqual([
      expect.objectContaining({
        name: "shell_exec",
        isError: true,
        text: expect.stringContaining("not idempotent, so it was not run again"),
      }),
    ]);
  }, 120_000);

  it("removes the session's container and workspace when the session is archived", async () => {
    const id = await session(await agent(), await environment());
    platform.fake.enqueue(
      { toolCalls: [{ name: "write", input: { path: "a.txt", content: "a\n" } }] },
      { text: "Written." },
    );
    await send(id, say("write a"));
    await platform.waitForIdle(id, "end_turn", 0, 60_000);
    expect(await platform.sandboxContainers(id)).toHaveLength(1);
    const workspace = await platform.sandboxWorkspace(id);
    expect(workspace).not.toBeNull();
    expect(await platform.sandboxWorkspaces()).toContain(workspace);

    const archived = await platform.request("POST", `/v1/sessions/${id}/archive`);
    expect(archived.status).toBe(200);
    expect(archived.body).toMatchObject({ status: "terminated", termination_reason: "archived" });
    await expect.poll(() => platform.sandboxContainers(id), { timeout: 20_000, interval: 200 }).toEqual([]);
    await expect
      .poll(() => platform.sandboxWorkspaces(), { timeout: 20_000, interval: 200 })
      .not.toContain(workspace);
    const released = await platform.waitForEvent(id, (event) => event.type === "session.status_terminated");
    expect(released).toMatchObject({ reason: "archived" });
  }, 120_000);
});
