import type { SessionEvent } from "@wakeloop/contracts";
import {
  type McpFixture,
  mcpFixtureServer,
  type Platform,
  startMcpPlatform,
  toolResults,
} from "@wakeloop/testing";
import { CORE_TOOLS, SessionToolSet, TOOL_SEARCH } from "@wakeloop/tool-runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Issue #29 item 1 through the running services, against the fake model speaking the OpenAI and the
// Anthropic streaming wire formats: an agent with the default toolset is offered the core and
// tool_search; a search reveals tools (built-in and MCP), the next request carries them appended after
// the tools it had, and they are callable; a deferred tool called by name runs and is offered from then
// on; a tool the policy denies is never found nor callable.
// (Agent-defined tools: agent-tools.e2e.test.ts finds one with tool_search before running it.)

let fixture: McpFixture;
let platform: Platform;

beforeAll(async () => {
  ({ platform, fixture } = await startMcpPlatform({ workers: 1 }));
}, 120_000);

afterAll(async () => {
  await platform?.stop();
  await fixture?.close();
});

const say = (text: string) => ({ type: "user.message", content: [{ type: "text", text }] });

type Provider = "openai_compatible" | "anthropic";

/** The tool names of the model requests from `from` on, in order, as each wire format names them. */
function requestTools(from: number): Array<{ names: string[]; stream: unknown }> {
  return platform.fake.requests
    .slice(from)
    .filter((request) => request.protocol !== null)
    .map((request) => {
      const body = request.body as {
        stream?: unknown;
        tools?: Array<{ name?: string; function?: { name: string } }>;
      };
      return {
        names: (body.tools ?? []).map((tool) => tool.function?.name ?? tool.name ?? "?"),
        stream: body.stream,
      };
    });
}

async function sessionTools(id: string): Promise<SessionToolSet> {
  const response = await platform.request("GET", `/v1/sessions/${id}/tools`);
  expect(response.status).toBe(200);
  return SessionToolSet.parse(response.body);
}

const placed = (entries: ReadonlyArray<{ tool: string }>) => entries.map((entry) => entry.tool);

describe.each<Provider>(["openai_compatible", "anthropic"])("tool search (%s)", (provider) => {
  it("offers the core and tool_search, reveals what a search finds, appends it, and never reveals what policy denies", async () => {
    const agent = await platform.createAgent({
      model: platform.fakeModel(provider),
      tool_policy: { deny: ["set_reminder"] },
      mcp_servers: [mcpFixtureServer(fixture)],
    });
    const id = await platform.create("/v1/sessions", { agent });

    const before = await sessionTools(id);
    expect(placed(before.offered).every((name) => name === TOOL_SEARCH || CORE_TOOLS.includes(name))).toBe(
      true,
    );
    expect(placed(before.offered)).toContain(TOOL_SEARCH);
    expect(before.deferred).toContainEqual(
      expect.objectContaining({ tool: "list_state_keys", rule: "deferred" }),
    );
    expect(before.excluded).toContainEqual(expect.objectContaining({ tool: "set_reminder", step: "agent" }));

    const first = platform.fake.requests.length;
    platform.fake.enqueue(
      {
        toolCalls: [
          { name: TOOL_SEARCH, input: { query: "list the keys of my state" } },
          { name: TOOL_SEARCH, input: { query: "echo the text back" } },
          { name: TOOL_SEARCH, input: { query: "set a reminder", max_results: 20 } },
        ],
      },
      {
        toolCalls: [
          { name: "list_state_keys", input: {} },
          { name: "set_reminder", input: { in_seconds: 60, message: "tea" } },
        ],
      },
      { text: "done" },
    );
    const events: SessionEvent[] = await platform.turn(id, [say("hello")]);

    const requests = requestTools(first);
    expect(requests).toHaveLength(3);
    expect(requests.every((request) => request.stream === true)).toBe(true);
    const [one, two, three] = requests.map((request) => request.names);
    // A one-line first turn: the core and tool_search, nothing deferred (MCP tools included).
    expect(one).toEqual(placed(before.offered));
    expect(one).not.toContain("list_state_keys");
    expect(one?.some((name) => name.startsWith("mcp__"))).toBe(false);

    // The search results: names and one-line descriptions; the denied tool is not among them.
    const searches = toolResults(events).filter((result) => result.name === TOOL_SEARCH);
    expect(searches).toHaveLength(3);
    const found = searches.flatMap((result) => result.value.tools as Array<{ name: string; status: string }>);
    expect(found.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(["list_state_keys", "mcp__fixture__echo"]),
    );
    expect(found.map((tool) => tool.name)).not.toContain("set_reminder");
    const revealed = events.flatMap((event) =>
      event.type === "agent.tool_result" ? (event.revealed_tools ?? []) : [],
    );
    expect(revealed).toEqual(expect.arrayContaining(["list_state_keys", "mcp__fixture__echo"]));
    expect(revealed).not.toContain("set_reminder");

    // The next request carries the revealed tools after the ones it had: the earlier list is a prefix.
    expect(two?.slice(0, one?.length)).toEqual(one);
    expect(two?.slice(one?.length)).toEqual([...new Set(revealed)]);
    // A revealed tool is callable; the denied one is refused, and reveals nothing.
    const results = toolResults(events).filter((result) => result.name !== TOOL_SEARCH);
    // (A refused call's result is committed with the calls, before the results of the ones that ran.)
    expect(results).toHaveLength(2);
    expect(results).toEqual(
      expect.arrayContaining([
        { name: "list_state_keys", isError: false, value: { keys: [] } },
        { name: "set_reminder", isError: true, value: expect.stringContaining("denied by agent.deny") },
      ]),
    );
    expect(three).toEqual(two);

    const after = await sessionTools(id);
    expect(placed(after.offered)).toEqual(two);
    expect(after.offered).toContainEqual(
      expect.objectContaining({ tool: "list_state_keys", rule: "revealed" }),
    );
    expect(placed(after.deferred)).not.toContain("list_state_keys");
    expect(placed(after.deferred)).toContain("mcp__fixture__fail");
    expect(placed(after.offered)).not.toContain("set_reminder");
    expect(placed(after.deferred)).not.toContain("set_reminder");

    // A deferred tool called by name without a search runs (policy allows it) and is offered from then on.
    expect(placed(after.deferred)).toContain("list_tools");
    const next = platform.fake.requests.length;
    platform.fake.enqueue({ toolCalls: [{ name: "list_tools", input: {} }] }, { text: "listed" });
    const called = await platform.turn(id, [say("list your tools")]);
    expect(toolResults(called)).toEqual([{ name: "list_tools", isError: false, value: { tools: [] } }]);
    const [ask, answer] = requestTools(next).map((request) => request.names);
    expect(ask).toEqual(two);
    expect(answer).toEqual([...(two ?? []), "list_tools"]);
  }, 120_000);
});
