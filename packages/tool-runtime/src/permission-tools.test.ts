import { McpUrlServerSpec, type PendingAction } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { computeEffectiveTools } from "./effective-tools";
import { checkPermission, describePermissions } from "./permission-tools";
import { sessionEffectiveTools } from "./session-tools";
import { mcpSession, noSandbox, platformSettings, policyContext, sandboxReady } from "./test-context";

const pendingActions: PendingAction[] = [
  { event_id: "sevt_1", kind: "tool_confirmation", name: "shell_run", input: { command: "make" } },
  { event_id: "sevt_2", kind: "custom_tool_result", name: "ask_user", input: { question: "Which?" } },
];

describe("describePermissions", () => {
  it("lists pending confirmations, client waits, always_ask tools and unavailable tools", () => {
    const effective = computeEffectiveTools(policyContext({ agentPolicy: { deny: ["bash"] } }), noSandbox);
    const description = describePermissions({ effective, pendingActions });
    expect(description.pending_confirmations).toEqual([
      { tool_use_id: "sevt_1", tool: "shell_run", input: { command: "make" } },
    ]);
    expect(description.pending_client_results).toEqual([{ tool_use_id: "sevt_2", tool: "ask_user" }]);
    // No sandbox: the always_ask shell tools are not offered at all, so memory's and the code saves are.
    expect(description.always_ask_tools.map((entry) => entry.tool)).toEqual([
      "create_library",
      "create_tool",
      "memory_promote_note",
      "update_library",
      "update_tool",
    ]);
    expect(description.unavailable_tools).toContainEqual({
      tool: "bash",
      step: "agent",
      reason: 'denied by agent.deny rule "bash"',
    });
    expect(description.unavailable_tools).toContainEqual({
      tool: "read",
      step: "runtime_gating",
      reason: "needs sandbox.ready; the session has no sandbox yet",
    });
  });

  it("lists always_ask tools with where their policy came from", () => {
    const effective = computeEffectiveTools(
      policyContext({
        agentTools: [{ type: "builtin", configs: [{ name: "write", permission_policy: "always_ask" }] }],
      }),
      sandboxReady,
    );
    const asks = describePermissions({ effective, pendingActions: [] }).always_ask_tools;
    expect(asks).toContainEqual({
      tool: "write",
      source: "agent_config",
      setting: "set by the agent's config for this tool",
    });
    expect(asks).toContainEqual({ tool: "shell_run", source: "tool_default", setting: "the tool's default" });
  });
});

describe("the permission of an MCP tool", () => {
  const crm = (fields: Record<string, unknown>) =>
    McpUrlServerSpec.parse({ type: "url", name: "crm", url: "https://mcp.example.com/mcp", ...fields });
  const listing = {
    name: "crm",
    status: "ready" as const,
    tools: ["echo", "find", "delete"].map((name) => ({ name, input_schema: { type: "object" } })),
  };
  const stateOf = (fields: Record<string, unknown>) => ({
    effective: sessionEffectiveTools(mcpSession([crm(fields)], [listing]), platformSettings),
    pendingActions: [],
  });

  it("names the server's setting it came from: configs[], default_config, the server-level policy", () => {
    const state = stateOf({
      default_config: { permission_policy: "always_ask" },
      configs: [{ name: "echo", permission_policy: "always_allow" }],
    });
    expect(checkPermission("mcp__crm__echo", state).reason).toBe(
      'mcp__crm__echo runs without confirmation (always_allow, configs["echo"].permission_policy of the agent\'s MCP server "crm")',
    );
    expect(checkPermission("mcp__crm__find", state).reason).toBe(
      "mcp__crm__find waits for the user's confirmation before each call (always_ask, default_config.permission_policy of the agent's MCP server \"crm\")",
    );
    expect(describePermissions(state).always_ask_tools).toContainEqual({
      tool: "mcp__crm__delete",
      source: "mcp_server_config",
      setting: 'default_config.permission_policy of the agent\'s MCP server "crm"',
    });
    expect(checkPermission("mcp__crm__find", stateOf({ permission_policy: "always_allow" })).reason).toBe(
      'mcp__crm__find runs without confirmation (always_allow, permission_policy of the agent\'s MCP server "crm")',
    );
  });

  it("is the tool's default when the server sets no policy", () => {
    const state = stateOf({});
    expect(checkPermission("mcp__crm__echo", state).reason).toBe(
      "mcp__crm__echo waits for the user's confirmation before each call (always_ask, the tool's default)",
    );
    expect(describePermissions(state).always_ask_tools).toContainEqual({
      tool: "mcp__crm__echo",
      source: "tool_default",
      setting: "the tool's default",
    });
  });
});

describe("checkPermission", () => {
  const effective = computeEffectiveTools(policyContext({ agentPolicy: { deny: ["bash"] } }), sandboxReady);
  const state = { effective, pendingActions };

  it("says a tool asks, with the pending confirmations of that tool", () => {
    expect(checkPermission("shell_run", state)).toEqual({
      tool: "shell_run",
      available: true,
      evaluated_permission: "ask",
      requires_confirmation: true,
      reason: "shell_run waits for the user's confirmation before each call (always_ask, the tool's default)",
      excluded_by: null,
      pending_confirmation_ids: ["sevt_1"],
    });
  });

  it("says a tool runs freely", () => {
    expect(checkPermission("read", state)).toMatchObject({
      available: true,
      evaluated_permission: "allow",
      requires_confirmation: false,
      reason: "read runs without confirmation (always_allow, the tool's default)",
    });
  });

  it("says why an excluded tool is missing, and when a tool does not exist", () => {
    expect(checkPermission("bash", state)).toMatchObject({
      available: false,
      evaluated_permission: "deny",
      reason: 'bash is not available: denied by agent.deny rule "bash"',
      excluded_by: { step: "agent", rule: "agent.deny:bash" },
    });
    expect(checkPermission("nope", state)).toMatchObject({
      available: false,
      evaluated_permission: "deny",
      excluded_by: null,
    });
  });
});
