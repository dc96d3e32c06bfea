import type { SessionEvent } from "@wakeloop/contracts";
import { createClient } from "@wakeloop/sdk";
import { Platform } from "@wakeloop/testing";
import { BatchPlan } from "@wakeloop/tool-runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The UI tools and run_sandbox_code through the services: send_message and render_blocks as events a
// client reads from the live stream, render_and_wait pausing until the client answers, and
// run_sandbox_code running in the session's own container (the sandbox-runner with real Docker).

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

async function newSession(environmentConfig?: Record<string, unknown>): Promise<string> {
  // run_sandbox_code asks by default; these agents allow it, so the exec policy alone decides.
  const agent = await create("/v1/agents", {
    name: "ui",
    model: platform.fakeModel(),
    tools: [{ type: "builtin", configs: [{ name: "run_sandbox_code", permission_policy: "always_allow" }] }],
  });
  if (environmentConfig === undefined) return create("/v1/sessions", { agent });
  const environment = await create("/v1/environments", {
    name: "ui sandbox",
    config: { memory_mb: 256, pids_limit: 128, ...environmentConfig },
  });
  return create("/v1/sessions", { agent, environment_id: environment });
}

async function send(sessionId: string, ...events: unknown[]): Promise<void> {
  const response = await platform.request("POST", `/v1/sessions/${sessionId}/events`, { events });
  expect(response.status, JSON.stringify(response.body)).toBe(202);
}

const say = (text: string) => ({ type: "user.message", content: [{ type: "text", text }] });
type ToolResult = Extract<SessionEvent, { type: "agent.tool_result" }>;
const resultTexts = (events: SessionEvent[]) =>
  events
    .filter((event): event is ToolResult => event.type === "agent.tool_result")
    .map((event) => ({
      isError: event.is_error,
      text: event.content.map((block) => ("text" in block ? block.text : "")).join(""),
    }));

const form = {
  type: "form",
  fields: [
    { name: "city", label: "City", type: "text", required: true },
    { name: "nights", label: "Nights", type: "number", default: 2 },
  ],
  submitLabel: "Book",
};

describe("UI tools", () => {
  it("send_message and render_blocks reach the client's live stream; bad blocks are refused", async () => {
    const id = await newSession();
    platform.fake.enqueue(
      {
        toolCalls: [
          { name: "send_message", input: { text: "Working on it…" } },
          {
            name: "render_blocks",
            input: {
              title: "Results",
              blocks: [
                { type: "table", columns: [{ key: "city", label: "City" }], data: [{ city: "Lyon" }] },
                { type: "alert", variant: "success", content: "Done" },
              ],
            },
          },
          { name: "render_blocks", input: { blocks: [{ type: "video", url: "https://example.org/v.mp4" }] } },
        ],
      },
      { text: "Shown." },
    );
    const client = createClient({ baseUrl: platform.baseUrl, apiKey: platform.apiKey });
    await send(id, say("show me"));
    const streamed: SessionEvent[] = [];
    const stop = new AbortController();
    for await (const event of client.events.stream(id, { signal: stop.signal })) {
      streamed.push(event);
      if (event.type === "session.status_idle") break;
    }
    stop.abort();

    const uses = streamed.filter((event) => event.type === "agent.tool_use");
    const message = streamed.find((event) => event.type === "agent.ui_message");
    expect(message).toMatchObject({ tool_use_id: uses[0]?.id, text: "Working on it…" });
    const blocks = streamed.filter((event) => event.type === "agent.ui_blocks");
    expect(blocks).toEqual([
      expect.objectContaining({
        tool_use_id: uses[1]?.id,
        title: "Results",
        blocks: [
          { type: "table", columns: [{ key: "city", label: "City" }], data: [{ city: "Lyon" }] },
          { type: "alert", variant: "success", content: "Done" },
        ],
      }),
    ]);
    expect(uses[2]).toMatchObject({ name: "render_blocks", evaluated_permission: "deny" });
    // Refused calls are answered when announced, before the calls that run.
    const results = resultTexts(streamed);
    expect(results[0]).toMatchObject({ isError: true, text: expect.stringContaining("render_blocks") });
    expect(results.slice(1)).toEqual([
      { isError: false, text: JSON.stringify({ ok: true }) },
      { isError: false, text: JSON.stringify({ ok: true, rendered: 2 }) },
    ]);
    // The shown calls committed with their results, so none can have an unknown outcome and the
    // ledger holds none of them; the batch's plan (three calls, one refused) is stored.
    expect(
      await platform.db.selectFrom("tool_calls").select("id").where("session_id", "=", id).execute(),
    ).toEqual([]);
    const batches = await platform.db
      .selectFrom("tool_batches")
      .select("plan")
      .where("session_id", "=", id)
      .execute();
    expect(
      batches.map((batch) => BatchPlan.parse(batch.plan).calls.map((call) => [call.name, call.status])),
    ).toEqual([
      [
        ["send_message", "run"],
        ["render_blocks", "run"],
        ["render_blocks", "rejected"],
      ],
    ]);
  }, 90_000);

  it("render_and_wait pauses with requires_action and resumes with the client's answer", async () => {
    const id = await newSession();
    const before = platform.fake.requests.length;
    platform.fake.enqueue(
      { toolCalls: [{ name: "render_and_wait", input: { title: "Book a stay", blocks: [form] } }] },
      { text: "Booked." },
    );
    await send(id, say("book me a room"));
    const idle = await platform.waitForIdle(id, "requires_action", 0, 60_000);
    const events = await platform.events(id);
    const use = events.find((event) => event.type === "agent.custom_tool_use");
    expect(use).toMatchObject({ name: "render_and_wait", input: { title: "Book a stay", blocks: [form] } });
    expect(idle).toMatchObject({ stop_reason: { type: "requires_action", event_ids: [use?.id] } });
    const pending = await platform.request("GET", `/v1/sessions/${id}/pending`);
    expect(pending.body.data).toEqual([
      expect.objectContaining({ event_id: use?.id, name: "render_and_wait" }),
    ]);

    const answer = { action: "submit", data: { city: "Lyon", nights: 3 } };
    await send(id, {
      type: "user.custom_tool_result",
      custom_tool_use_id: use?.id,
      content: [{ type: "text", text: JSON.stringify(answer) }],
    });
    await platform.waitForIdle(id, "end_turn", idle.seq, 60_000);
    const resumed = platform.fake.requests.slice(before).filter((request) => request.view)[1];
    expect(JSON.stringify(resumed?.body)).toContain(JSON.stringify(JSON.stringify(answer)).slice(1, -1));
  }, 90_000);

  it("render_and_wait hands inline component code to the client, and refuses code that does not parse", async () => {
    const id = await newSession();
    const code =
      "export default function Pick({ callTool }) { return <button onClick={() => callTool('pick', {})}>Pick</button>; }";
    platform.fake.enqueue(
      { toolCalls: [{ name: "render_and_wait", input: { code: "export default () => <div>" } }] },
      {
        toolCalls: [{ name: "render_and_wait", input: { code, props: { label: "Pick" }, title: "Choose" } }],
      },
    );
    await send(id, say("let me choose"));
    await platform.waitForIdle(id, "requires_action", 0, 60_000);
    const events = await platform.events(id);
    const refused = events.find((event) => event.type === "agent.tool_result");
    expect(refused).toMatchObject({ is_error: true });
    expect(JSON.stringify(refused)).toContain("code does not parse");
    const use = events.find((event) => event.type === "agent.custom_tool_use");
    expect(use).toMatchObject({
      name: "render_and_wait",
      input: { code, props: { label: "Pick" }, title: "Choose" },
    });
  }, 90_000);
});

describe("run_sandbox_code", () => {
  it("runs in the session's container: it reads a file only that sandbox has", async () => {
    const id = await newSession({});
    platform.fake.enqueue(
      { toolCalls: [{ name: "write", input: { path: "secret.txt", content: "only-in-this-sandbox\n" } }] },
      {
        toolCalls: [
          {
            name: "run_sandbox_code",
            input: {
              language: "python",
              code: "import os\nprint(open('/workspace/secret.txt').read().strip(), os.path.exists('/.dockerenv'))",
            },
          },
          {
            name: "run_sandbox_code",
            input: { code: "console.log(require('node:fs').readdirSync('/workspace').join(','))" },
          },
        ],
      },
      { text: "Read it." },
    );
    await send(id, say("read the secret in the sandbox"));
    await platform.waitForIdle(id, "end_turn", 0, 90_000);
    const results = resultTexts(await platform.events(id));
    expect(results[1]).toMatchObject({
      isError: false,
      text: expect.stringContaining("only-in-this-sandbox True"),
    });
    expect(results[2]).toMatchObject({ isError: false, text: expect.stringContaining("secret.txt") });
  }, 120_000);

  it("answers to the environment's exec policy: an interpreter off the allowlist is denied", async () => {
    const id = await newSession({
      exec_security: "allowlist",
      exec_allowlist: ["python3 *"],
      exec_ask: "off",
    });
    platform.fake.enqueue(
      {
        toolCalls: [
          { name: "run_sandbox_code", input: { code: "console.log('never')" } },
          { name: "run_sandbox_code", input: { language: "python", code: "print('allowed-' + str(6 * 7))" } },
        ],
      },
      { text: "One ran." },
    );
    await send(id, say("run two programs"));
    await platform.waitForIdle(id, "end_turn", 0, 90_000);
    const events = await platform.events(id);
    const uses = events.filter((event) => event.type === "agent.tool_use");
    expect(uses.map((use) => use.evaluated_permission)).toEqual(["deny", "allow"]);
    const results = resultTexts(events);
    expect(results[0]).toMatchObject({ isError: true, text: expect.stringContaining("not run") });
    expect(results[1]).toMatchObject({ isError: false, text: expect.stringContaining("allowed-42") });
  }, 120_000);
});
