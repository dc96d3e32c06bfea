import { createClient } from "@wakeloop/sdk";
import { Platform, toolResults } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Agent-defined tools, libraries and UI components through the services (issue #13): the agent saves
// a tool and a library (each save asks first), the tool is callable from the next wake on (never in the
// wake that saved it) and found there with tool_search, runs with node in the session's own container (real Docker) requiring the
// library, and once disabled it is gone from the offered tools with the reason. A stored UI component
// is rendered by name.

let platform: Platform;

beforeAll(async () => {
  platform = await Platform.start({ workers: 1, sandbox: true });
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

async function newSession(): Promise<string> {
  const agent = await platform.create("/v1/agents", { name: "builder", model: platform.fakeModel() });
  const environment = await platform.create("/v1/environments", {
    name: "builder sandbox",
    config: { memory_mb: 256, pids_limit: 128 },
  });
  return platform.create("/v1/sessions", { agent, environment_id: environment });
}

const say = (text: string) => ({ type: "user.message", content: [{ type: "text", text }] });
const allow = (id: string | undefined) => ({
  type: "user.tool_confirmation",
  tool_use_id: id,
  result: "allow",
});

/** The tool names a model request offered (OpenAI wire format). */
function offered(index: number): string[] {
  const body = platform.fake.requests[index]?.body as { tools?: Array<{ function: { name: string } }> };
  return (body.tools ?? []).map((tool) => tool.function.name);
}

const library = {
  name: "math_utils",
  description: "arithmetic helpers",
  code: "exports.double = (n) => n * 2;\nexports.label = (n) => require('formatting').label(n);",
};
const formatting = {
  name: "formatting",
  description: "labels",
  code: "module.exports = { label: (n) => 'n=' + n };",
};
const tool = {
  name: "double_it",
  description: "Doubles n with the math_utils library",
  parameter_schema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
  code: "const m = require('math_utils');\nconsole.log('doubling', args.n);\nreturn { doubled: m.double(args.n), label: m.label(args.n), node: process.version.startsWith('v') };",
};

describe("agent-defined tools", () => {
  it("are saved after an allow, offered from the next wake, run in the sandbox with their libraries, and disabled with a reason", async () => {
    const id = await newSession();
    const first = platform.fake.requests.length;
    platform.fake.enqueue(
      {
        toolCalls: [
          { name: "create_library", input: formatting },
          { name: "create_library", input: library },
          { name: "create_tool", input: tool },
          // Refused at save time: code that does not parse stores nothing.
          { name: "create_tool", input: { ...tool, name: "broken", code: "return (" } },
          // Not offered in the wake that saves it.
          { name: "agent__double_it", input: { n: 1 } },
        ],
      },
      { text: "Saved." },
    );
    await platform.send(id, say("make a doubling tool"));
    let idle = await platform.waitForIdle(id, "requires_action", 0, 90_000);
    let events = await platform.events(id);
    const uses = events.filter((event) => event.type === "agent.tool_use");
    expect(uses.map((use) => [use.name, use.evaluated_permission])).toEqual([
      ["create_library", "ask"],
      ["create_library", "ask"],
      ["create_tool", "ask"],
      ["create_tool", "ask"],
      ["agent__double_it", "deny"],
    ]);
    expect(toolResults(events)).toEqual([
      { name: "agent__double_it", isError: true, value: expect.stringContaining("agent__double_it") },
    ]);
    // Nothing is stored before the allow.
    const before = await platform.request("GET", `/v1/sessions/${id}/tools`);
    expect(JSON.stringify(before.body)).not.toContain("agent__double_it");

    await platform.send(id, ...uses.slice(0, 4).map((use) => allow(use.id)));
    idle = await platform.waitForIdle(id, "end_turn", idle.seq, 90_000);
    events = await platform.events(id);
    expect(toolResults(events).slice(1)).toEqual([
      { name: "create_library", isError: false, value: { name: "formatting", version: 1 } },
      { name: "create_library", isError: false, value: { name: "math_utils", version: 1 } },
      { name: "create_tool", isError: false, value: { name: "double_it", version: 1 } },
      {
        name: "create_tool",
        isError: true,
        value: expect.stringMatching(/^create_tool: code does not parse/),
      },
    ]);
    // The wake that ran the saves still offered the tools it started with.
    expect(
      platform.fake.requests
        .slice(first)
        .some((_, index) => offered(first + index).includes("agent__double_it")),
    ).toBe(false);

    // Next wake: deferred until tool_search finds it (docs/tool-search.md), then offered after the
    // tools the request already carried; it asks, and runs in the session's container.
    const second = platform.fake.requests.length;
    platform.fake.enqueue(
      { toolCalls: [{ name: "tool_search", input: { query: "double a number" } }] },
      { toolCalls: [{ name: "agent__double_it", input: { n: 21 } }] },
      { text: "42." },
    );
    await platform.send(id, say("double 21"));
    idle = await platform.waitForIdle(id, "requires_action", idle.seq, 90_000);
    expect(offered(second)).not.toContain("agent__double_it");
    expect(offered(second)).toContain("tool_search");
    // Called by name in the first wake, so offered since.
    expect(offered(second)).toContain("create_tool");
    expect(offered(second + 1).slice(0, offered(second).length)).toEqual(offered(second));
    expect(offered(second + 1)).toContain("agent__double_it");
    events = await platform.events(id);
    const call = events.filter((event) => event.type === "agent.tool_use").at(-1);
    expect(call).toMatchObject({ name: "agent__double_it", evaluated_permission: "ask" });
    await platform.send(id, allow(call?.id));
    idle = await platform.waitForIdle(id, "end_turn", idle.seq, 90_000);
    const ran = toolResults(await platform.events(id)).at(-1);
    expect(ran).toEqual({
      name: "agent__double_it",
      isError: false,
      value: { result: { doubled: 42, label: "n=21", node: true }, logs: ["doubling 21"], version: 1 },
    });
    const ledger = await platform.db
      .selectFrom("tool_calls")
      .select(["status"])
      .where("session_id", "=", id)
      .where("name", "=", "agent__double_it")
      .execute();
    expect(ledger).toEqual([{ status: "succeeded" }]);

    // Disabled: gone from the offered set of the next wake, with the reason in /tools.
    platform.fake.enqueue(
      {
        toolCalls: [
          { name: "disable_tool", input: { name: "double_it" } },
          { name: "list_tools", input: { include_disabled: true } },
        ],
      },
      { text: "Disabled." },
    );
    await platform.send(id, say("disable it"));
    idle = await platform.waitForIdle(id, "end_turn", idle.seq, 90_000);
    expect(toolResults(await platform.events(id)).slice(-2)).toEqual([
      { name: "disable_tool", isError: false, value: { name: "double_it", enabled: false } },
      {
        name: "list_tools",
        isError: false,
        value: { tools: [{ name: "double_it", description: tool.description, enabled: false, version: 1 }] },
      },
    ]);
    const tools = await platform.request("GET", `/v1/sessions/${id}/tools`);
    expect((tools.body.tools as Array<{ name: string }>).map((entry) => entry.name)).not.toContain(
      "agent__double_it",
    );
    expect(tools.body.excluded).toContainEqual({
      tool: "agent__double_it",
      step: "agent",
      rule: "agent_tools.disabled:double_it",
      reason: "disabled by the agent (disable_tool); enable_tool offers it again from the next wake",
    });
    const third = platform.fake.requests.length;
    platform.fake.enqueue({ text: "ok" });
    await platform.send(id, say("anything else?"));
    await platform.waitForIdle(id, "end_turn", idle.seq, 90_000);
    expect(offered(third)).not.toContain("agent__double_it");
  }, 300_000);
});

describe("UI components", () => {
  it("are stored and versioned, rendered by name in render_blocks and render_and_wait, and served to the client", async () => {
    const id = await newSession();
    const card = {
      name: "order_card",
      description: "An order with a confirm button",
      code: "export default function OrderCard({ order, callTool }) {\n  return <button onClick={() => callTool('confirm', { id: order })}>Confirm {order}</button>;\n}",
      props_schema: { type: "object", properties: { order: { type: "string" } } },
    };
    platform.fake.enqueue(
      {
        toolCalls: [
          { name: "create_ui_component", input: card },
          {
            name: "create_ui_component",
            input: { ...card, name: "broken_card", code: "export default () => <b>" },
          },
        ],
      },
      {
        toolCalls: [
          { name: "update_ui_component", input: { name: "order_card", description: "An order card, v2" } },
          {
            name: "render_blocks",
            input: {
              title: "Your order",
              blocks: [
                { type: "markdown", content: "Please check:" },
                { type: "component", component: "order_card", props: { order: "A-17" } },
                { type: "component", component: "order_card", version: 1, props: { order: "A-16" } },
              ],
            },
          },
          { name: "render_blocks", input: { blocks: [{ type: "component", component: "no_such_card" }] } },
          { name: "list_ui_components", input: {} },
        ],
      },
      {
        toolCalls: [
          {
            name: "render_and_wait",
            input: { blocks: [{ type: "component", component: "order_card", props: { order: "A-17" } }] },
          },
        ],
      },
      { text: "Confirmed." },
    );
    await platform.send(id, say("show my order"));
    const idle = await platform.waitForIdle(id, "requires_action", 0, 90_000);
    const events = await platform.events(id);
    expect(toolResults(events)).toEqual([
      { name: "create_ui_component", isError: false, value: { name: "order_card", version: 1 } },
      {
        name: "create_ui_component",
        isError: true,
        value: expect.stringMatching(/^create_ui_component: code does not parse/),
      },
      { name: "update_ui_component", isError: false, value: { name: "order_card", version: 2 } },
      { name: "render_blocks", isError: false, value: { ok: true, rendered: 3 } },
      {
        name: "render_blocks",
        isError: true,
        value: expect.stringContaining('no UI component "no_such_card"'),
      },
      {
        name: "list_ui_components",
        isError: false,
        value: { components: [{ name: "order_card", description: "An order card, v2", version: 2 }] },
      },
    ]);
    // The shown blocks pin the version each component block was rendered at.
    const shown = events.filter((event) => event.type === "agent.ui_blocks");
    expect(shown).toEqual([
      expect.objectContaining({
        title: "Your order",
        blocks: [
          { type: "markdown", content: "Please check:" },
          { type: "component", component: "order_card", version: 2, props: { order: "A-17" } },
          { type: "component", component: "order_card", version: 1, props: { order: "A-16" } },
        ],
      }),
    ]);
    const agentId = (await platform.request("GET", `/v1/sessions/${id}`)).body.agent.id as string;
    // A client loads the code of the version a block pinned, through the SDK.
    const client = createClient({ baseUrl: platform.baseUrl, apiKey: platform.apiKey });
    expect(await client.agents.uiComponent(agentId, "order_card", 1)).toEqual({
      name: "order_card",
      description: card.description,
      code: card.code,
      props_schema: card.props_schema,
      version: 1,
    });
    expect((await client.agents.uiComponent(agentId, "order_card")).version).toBe(2);
    await expect(client.agents.uiComponent(agentId, "no_such_card")).rejects.toMatchObject({
      status: 404,
      error: { type: "not_found_error" },
    });

    // render_and_wait hands the component block to the client and waits for its answer.
    const use = events.find((event) => event.type === "agent.custom_tool_use");
    expect(use).toMatchObject({
      name: "render_and_wait",
      input: { blocks: [{ type: "component", component: "order_card" }] },
    });
    expect(idle).toMatchObject({ stop_reason: { type: "requires_action", event_ids: [use?.id] } });
    await platform.send(id, {
      type: "user.custom_tool_result",
      custom_tool_use_id: use?.id,
      content: [{ type: "text", text: JSON.stringify({ action: "confirm", id: "A-17" }) }],
    });
    await platform.waitForIdle(id, "end_turn", idle.seq, 90_000);
  }, 300_000);
});
