import { describe, expect, it } from "vitest";
import { computeEffectiveTools } from "./effective-tools";
import { policyContext, sandboxReady } from "./test-context";
import { offerTools } from "./tool-offer";
import { searchTools } from "./tool-search";

function session(deny: string[] = [], revealed: string[] = []) {
  const agentPolicy = { deny };
  const effective = computeEffectiveTools(policyContext({ agentPolicy }), sandboxReady);
  return offerTools(effective, { tool_policy: agentPolicy, tools: [], provider: "anthropic" }, revealed);
}

describe("searchTools", () => {
  it("ranks by name, description and parameter names", () => {
    expect(searchTools(session(), "reminder", 3)[0]?.name).toMatch(/reminder/);
    expect(searchTools(session(), "memory search", 5).map((match) => match.name)).toContain("memory_search");
    // A parameter name alone finds its tool.
    expect(searchTools(session(), "cron", 5).map((match) => match.name)).toContain("create_scheduled_task");
  });

  it("marks tools the request already offers and caps the count", () => {
    const matches = searchTools(session([], ["spawn_session"]), "spawn a sub-session", 4);
    expect(matches.length).toBeLessThanOrEqual(4);
    expect(matches.find((match) => match.name === "spawn_session")?.offered).toBe(true);
    expect(searchTools(session(), "read a file", 10).find((match) => match.name === "read")?.offered).toBe(
      true,
    );
  });

  it("never finds a tool the policy denies, nor tool_search itself", () => {
    const names = searchTools(session(["spawn_session", "memory_*"]), "spawn session memory search", 20).map(
      (match) => match.name,
    );
    expect(names).not.toContain("spawn_session");
    expect(names.some((name) => name.startsWith("memory_"))).toBe(false);
    expect(searchTools(session(), "tool search find tools", 20).map((match) => match.name)).not.toContain(
      "tool_search",
    );
  });

  it("gives the same answer for the same set and query", () => {
    expect(searchTools(session(), "session", 20)).toEqual(searchTools(session(), "session", 20));
    expect(searchTools(session(), "zzzzqqq", 5)).toEqual([]);
  });
});
