import type { AgentTool } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { agentToolRegistry } from "./registry";
import { validateAgentTools, validateEnvironmentPolicy, validateToolPolicy } from "./validate-policy";

const custom: AgentTool = {
  type: "custom",
  name: "lookup_order",
  description: "Look an order up",
  input_schema: { type: "object", properties: { id: { type: "string" } } },
};

function caught(run: () => unknown): { code: string; message: string; details: unknown } {
  try {
    run();
  } catch (error) {
    return error as { code: string; message: string; details: unknown };
  }
  throw new Error("expected an error");
}

describe("validateAgentTools", () => {
  it("accepts names, groups, patterns and the agent's own custom tools", () => {
    const registry = validateAgentTools({
      tools: [
        { type: "builtin", configs: [{ name: "shell_run", permission_policy: "always_allow" }] },
        custom,
      ],
      tool_policy: {
        profile: "coding",
        allow: ["group:fs", "shell_*", "lookup_order", "group:custom", "group:web"],
        deny: ["sandbox_execute"],
        by_provider: { openai: { deny: ["edit"] } },
      },
    });
    expect(registry.byName.has("lookup_order")).toBe(true);
  });

  it("rejects unknown names, groups and dead patterns with the valid names listed", () => {
    const error = caught(() =>
      validateAgentTools({
        tools: [],
        tool_policy: { allow: ["reed", "group:nope"], by_provider: { gemini: { deny: ["shel_*"] } } },
      }),
    );
    expect(error.code).toBe("unknown_tool");
    expect(error.message).toContain('"reed" in tool_policy.allow');
    expect(error.message).toContain('"group:nope" in tool_policy.allow');
    expect(error.message).toContain('"shel_*" in tool_policy.by_provider.gemini.deny');
    expect(error.message).toContain(
      "Valid tool names: agent_compare_setup, agent_describe_setup, apply_patch, ask_user, bash,",
    );
    expect(error.message).toContain("group:fs");
    expect(error.details).toMatchObject({
      unknown: expect.arrayContaining([{ selector: "reed", where: "tool_policy.allow" }]),
    });
  });

  it("rejects builtin configs that name no managed tool, including custom tools", () => {
    const error = caught(() =>
      validateAgentTools({
        tools: [{ type: "builtin", configs: [{ name: "lookup_order", enabled: false }] }, custom],
        tool_policy: {},
      }),
    );
    expect(error.code).toBe("unknown_tool");
    expect(error.message).toContain('"lookup_order" in tools[0].configs');
  });

  it("rejects two builtin toolsets, bad custom schemas and name conflicts", () => {
    const builtin: AgentTool = { type: "builtin", configs: [] };
    expect(caught(() => validateAgentTools({ tools: [builtin, builtin], tool_policy: {} })).code).toBe(
      "invalid_tool_config",
    );
    const twice: AgentTool = {
      type: "builtin",
      configs: [{ name: "read" }, { name: "read", enabled: false }],
    };
    expect(caught(() => validateAgentTools({ tools: [twice], tool_policy: {} })).code).toBe(
      "invalid_tool_config",
    );
    const bad: AgentTool = { ...custom, input_schema: { type: "array" } } as AgentTool;
    expect(caught(() => validateAgentTools({ tools: [bad], tool_policy: {} })).code).toBe(
      "invalid_tool_schema",
    );
    const clash: AgentTool = { ...custom, name: "get_state" } as AgentTool;
    expect(caught(() => validateAgentTools({ tools: [clash], tool_policy: {} })).code).toBe(
      "tool_name_conflict",
    );
  });

  it("reserves the mcp__ prefix for MCP tools: a custom tool may not take a name under it", () => {
    const namespaced: AgentTool = { ...custom, name: "mcp__crm__find" } as AgentTool;
    const error = caught(() => validateAgentTools({ tools: [namespaced], tool_policy: {} }));
    expect(error.code).toBe("reserved_tool_name");
    expect(error.message).toBe(
      'custom tool "mcp__crm__find" is reserved: names starting with mcp__ belong to the tools of MCP servers (mcp__<server>__<tool>); choose another name',
    );
    expect(error.details).toEqual({ tool: "mcp__crm__find" });
    const near: AgentTool = { ...custom, name: "mcp_lookup" } as AgentTool;
    expect(() => validateAgentTools({ tools: [near], tool_policy: {} })).not.toThrow();
  });
});

describe("validateEnvironmentPolicy", () => {
  it("checks against managed tools and standard groups", () => {
    expect(() =>
      validateEnvironmentPolicy({ deny: ["group:custom", "shell_run"], profile: "coding" }),
    ).not.toThrow();
    expect(caught(() => validateEnvironmentPolicy({ allow: ["lookup_order"] })).code).toBe("unknown_tool");
  });

  it("refuses tool names chosen by an environment, naming where", () => {
    const refused = caught(() =>
      validateEnvironmentPolicy({
        tool_names: "openclaw",
        by_provider: { openai: { tool_names: "openboa" } },
      }),
    );
    expect(refused.code).toBe("invalid_tool_config");
    expect(refused.message).toContain("tool_policy.tool_names, tool_policy.by_provider.openai.tool_names");
  });

  it("validateToolPolicy names where the selector was found", () => {
    const registry = agentToolRegistry({ tools: [] });
    expect(() => validateToolPolicy({ deny: ["nope"] }, registry, "global")).toThrow(/"nope" in global.deny/);
  });
});
