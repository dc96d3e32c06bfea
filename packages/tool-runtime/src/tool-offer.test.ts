import { type AgentTool, McpUrlServerSpec, type ToolPolicy } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { TOOL_SEARCH } from "./builtins/tool-search";
import { computeEffectiveTools } from "./effective-tools";
import { mcpToolName } from "./mcp-tools";
import { sessionEffectiveTools } from "./session-tools";
import { mcpSession, platformSettings, policyContext, sandboxReady } from "./test-context";
import { CORE_TOOLS, offeredTools, offerTools } from "./tool-offer";

function offer(agentPolicy: ToolPolicy = {}, revealed: string[] = [], agentTools: AgentTool[] = []) {
  const effective = computeEffectiveTools(policyContext({ agentPolicy, agentTools }), sandboxReady);
  return offerTools(
    effective,
    { tool_policy: agentPolicy, tools: agentTools, provider: "anthropic" },
    revealed,
  );
}

const names = (placements: ReadonlyArray<{ tool: string }>) => placements.map((placement) => placement.tool);

describe("offerTools", () => {
  it("offers a default agent the core and tool_search, by name, and defers every other tool", () => {
    const set = offer();
    const offered = names(set.offered);
    expect(offered).toContain(TOOL_SEARCH);
    expect(offered.every((name) => name === TOOL_SEARCH || CORE_TOOLS.includes(name))).toBe(true);
    expect(offered).toEqual([...offered].sort());
    expect(offered.length).toBeLessThanOrEqual(14);
    // Everything callable is either offered or deferred, once.
    expect([...offered, ...names(set.deferred)].sort()).toEqual(set.tools.map((tool) => tool.name).sort());
    expect(names(set.deferred)).toContain("spawn_session");
    expect(set.deferred.every((placement) => placement.rule === "deferred")).toBe(true);
  });

  it("appends revealed tools after the base in reveal order, keeping the earlier list a prefix", () => {
    const before = names(offer().offered);
    const once = names(offer({}, ["memory_read"]).offered);
    const twice = names(offer({}, ["memory_read", "bash", "spawn_session", "no_such_tool"]).offered);
    expect(once).toEqual([...before, "memory_read"]);
    // A core tool in the list changes nothing; an unknown name is not offered.
    expect(twice).toEqual([...before, "memory_read", "spawn_session"]);
    expect(offer({}, ["spawn_session"]).offered.at(-1)?.rule).toBe("revealed");
  });

  it("never offers a revealed tool the policy denies", () => {
    const set = offer({ deny: ["spawn_session"] }, ["spawn_session"]);
    expect(names(set.offered)).not.toContain("spawn_session");
    expect(names(set.deferred)).not.toContain("spawn_session");
    expect(set.excluded.map((exclusion) => exclusion.tool)).toContain("spawn_session");
  });

  it("opts tools in eagerly through the agent's profile, allow lists and builtin configs", () => {
    const set = offer(
      { also_allow: ["group:memory"] },
      [],
      [{ type: "builtin", configs: [{ name: "set_reminder", enabled: true }] }],
    );
    const memoryRead = set.offered.find((placement) => placement.tool === "memory_read");
    expect(memoryRead?.rule).toBe("eager:agent.also_allow:group:memory");
    expect(set.offered.find((placement) => placement.tool === "set_reminder")?.rule).toBe(
      "eager:agent.tools.configs:set_reminder",
    );
    // The full profile opts every tool in: nothing deferred, so no search either.
    const full = offer({ profile: "full" });
    expect(full.deferred).toEqual([
      expect.objectContaining({ tool: TOOL_SEARCH, rule: "nothing_to_search" }),
    ]);
    expect(names(full.offered)).not.toContain(TOOL_SEARCH);
    expect(names(full.offered).length).toBe(full.tools.length - 1);
  });

  it("defers nothing when a policy removes tool_search", () => {
    const set = offer({ deny: [TOOL_SEARCH] });
    expect(set.deferred).toEqual([]);
    expect(names(set.offered)).toEqual(set.tools.map((tool) => tool.name));
    expect(set.offered[0]?.rule).toBe("no_search");
  });

  it("defers MCP tools and offers the request's definitions in offered order", () => {
    const session = mcpSession(
      [McpUrlServerSpec.parse({ type: "url", name: "docs", url: "https://mcp.example.com/mcp" })],
      [{ name: "docs", status: "ready", tools: [{ name: "lookup", input_schema: { type: "object" } }] }],
    );
    const name = mcpToolName("docs", "lookup");
    const set = sessionEffectiveTools(session, platformSettings);
    expect(names(set.deferred)).toContain(name);
    const revealed = sessionEffectiveTools({ ...session, revealedTools: [name] }, platformSettings);
    expect(offeredTools(revealed).map((tool) => tool.name)).toEqual(names(revealed.offered));
    expect(names(revealed.offered).at(-1)).toBe(name);
  });
});
