import type { ToolDefinition } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { agentCodeTools } from "./builtins/agent-code";
import { navigationTools } from "./builtins/navigation";
import { SPAWN_ALIASES, subSessionTools } from "./builtins/sub-sessions";
import { uiTools } from "./builtins/ui";
import { applyPolicyPipeline } from "./policy-pipeline";
import { createToolRegistry, customToolDefinition } from "./registry";
import { policyContext } from "./test-context";

function names(tools: readonly { name: string }[]): string[] {
  return tools.map((tool) => tool.name);
}

function exclusionOf(result: ReturnType<typeof applyPolicyPipeline>, tool: string) {
  return result.excluded.find((exclusion) => exclusion.tool === tool);
}

const lookup = customToolDefinition({
  type: "custom",
  name: "lookup_order",
  description: "Look an order up",
  input_schema: { type: "object" },
});

describe("profile step", () => {
  it("keeps only the profile's managed tools; custom tools pass", () => {
    const ctx = policyContext({ agentPolicy: { profile: "minimal" }, agentTools: [{ ...lookupSpec() }] });
    const result = applyPolicyPipeline(ctx);
    expect(names(result.tools)).toEqual(["lookup_order", "permissions_check", "permissions_describe"]);
    expect(exclusionOf(result, "read")).toEqual({
      tool: "read",
      step: "profile",
      rule: "profile:minimal",
      reason: 'not in the "minimal" profile (agent.profile) nor in any also_allow',
    });
  });

  it("agent profile overrides the global profile; also_allow widens it", () => {
    const ctx = policyContext({
      globalPolicy: { profile: "full", also_allow: ["get_state"] },
      agentPolicy: { profile: "minimal", also_allow: ["read"] },
    });
    expect(names(applyPolicyPipeline(ctx).tools)).toEqual([
      "get_state",
      "permissions_check",
      "permissions_describe",
      "read",
    ]);
  });

  it("the coding profile holds fs, runtime, state, messaging and permission tools", () => {
    const tools = names(applyPolicyPipeline(policyContext({ globalPolicy: { profile: "coding" } })).tools);
    for (const name of ["read", "shell_run", "set_state", "ask_user", "permissions_check"]) {
      expect(tools).toContain(name);
    }
  });

  it("the messaging profile holds ask_user, the UI and UI component tools, the session tools and the permission views", () => {
    const tools = names(applyPolicyPipeline(policyContext({ globalPolicy: { profile: "messaging" } })).tools);
    expect(tools).toEqual(
      [
        "ask_user",
        "permissions_check",
        "permissions_describe",
        ...navigationTools.map((tool) => tool.name),
        ...subSessionTools.map((tool) => tool.name).filter((name) => !SPAWN_ALIASES.includes(name)),
        ...uiTools.map((tool) => tool.name),
        ...agentCodeTools.filter((tool) => tool.group === "ui_components").map((tool) => tool.name),
      ].sort(),
    );
  });
});

describe("tool names step", () => {
  const spawnNames = (result: ReturnType<typeof applyPolicyPipeline>) =>
    names(result.tools).filter((name) => name === "spawn_session" || SPAWN_ALIASES.includes(name));

  it("offers one name per implementation, personal-agent's by default, and says why the others are hidden", () => {
    const result = applyPolicyPipeline(policyContext());
    expect(spawnNames(result)).toEqual(["spawn_session"]);
    expect(exclusionOf(result, "session_delegate")).toEqual({
      tool: "session_delegate",
      step: "tool_names",
      rule: "tool_names:personal_agent",
      reason:
        'session_delegate is another name of spawn_session (one implementation); the "personal_agent" tool names (default) offer spawn_session',
    });
    expect(exclusionOf(result, "sessions_spawn")).toMatchObject({ step: "tool_names" });
  });

  it("takes the most specific setting: agent by provider, agent, platform by provider, platform", () => {
    const global = { tool_names: "openboa", by_provider: { openai: { tool_names: "openclaw" } } } as const;
    expect(spawnNames(applyPolicyPipeline(policyContext({ globalPolicy: global })))).toEqual([
      "session_delegate",
    ]);
    const onOpenai = applyPolicyPipeline(policyContext({ globalPolicy: global, provider: "openai" }));
    expect(spawnNames(onOpenai)).toEqual(["sessions_spawn"]);
    expect(exclusionOf(onOpenai, "spawn_session")).toMatchObject({
      rule: "tool_names:openclaw",
      reason: expect.stringContaining("(global.by_provider.openai.tool_names) offer sessions_spawn"),
    });
    const agentChoice = policyContext({
      globalPolicy: global,
      provider: "openai",
      agentPolicy: { tool_names: "personal_agent", by_provider: { gemini: { tool_names: "openclaw" } } },
    });
    expect(spawnNames(applyPolicyPipeline(agentChoice))).toEqual(["spawn_session"]);
    const agentByProvider = { ...agentChoice, provider: "gemini" as const };
    expect(exclusionOf(applyPolicyPipeline(agentByProvider), "spawn_session")).toMatchObject({
      reason: expect.stringContaining("(agent.by_provider.gemini.tool_names)"),
    });
  });

  it("hides only the names of one implementation; a deny of the offered name leaves none", () => {
    const result = applyPolicyPipeline(
      policyContext({ agentPolicy: { tool_names: "openclaw", deny: ["sessions_spawn"] } }),
    );
    expect(spawnNames(result)).toEqual([]);
    expect(names(result.tools)).toEqual(expect.arrayContaining(["sessions_send", "subagents"]));
    expect(exclusionOf(result, "sessions_spawn")).toMatchObject({ step: "agent" });
  });
});

describe("provider profile step", () => {
  it("narrows by the provider's profile and records the step", () => {
    const ctx = policyContext({
      provider: "gemini",
      globalPolicy: { by_provider: { gemini: { profile: "minimal" }, openai: { profile: "full" } } },
    });
    const result = applyPolicyPipeline(ctx);
    expect(exclusionOf(result, "read")).toMatchObject({
      step: "provider_profile",
      rule: "profile:minimal",
      reason:
        'not in the "minimal" profile for gemini (global.by_provider.gemini.profile) nor in any also_allow',
    });
  });
});

describe("allow and deny steps", () => {
  it("global allow keeps only matches, deny wins inside the step", () => {
    const ctx = policyContext({ globalPolicy: { allow: ["group:state"], deny: ["delete_*"] } });
    const result = applyPolicyPipeline(ctx);
    expect(names(result.tools)).toEqual(["get_state", "list_state_keys", "set_state"]);
    expect(exclusionOf(result, "delete_state")).toMatchObject({
      step: "global",
      rule: "global.deny:delete_*",
      reason: 'denied by global.deny rule "delete_*"',
    });
    expect(exclusionOf(result, "read")).toMatchObject({
      step: "global",
      rule: "global.allow",
      reason: "not matched by global.allow [group:state]",
    });
  });

  it("a later deny removes what an earlier also_allow let through (deny wins at every step)", () => {
    const ctx = policyContext({
      globalPolicy: { profile: "minimal", also_allow: ["shell_run"] },
      agentPolicy: { deny: ["shell_*"] },
    });
    const result = applyPolicyPipeline(ctx);
    expect(exclusionOf(result, "shell_run")).toMatchObject({
      step: "agent",
      reason: 'denied by agent.deny rule "shell_*"',
    });
  });

  it("provider and agent-provider levels apply only to their provider", () => {
    const policy = { by_provider: { openai: { deny: ["read"] } } };
    const openai = applyPolicyPipeline(
      policyContext({ provider: "openai", globalPolicy: policy, agentPolicy: policy }),
    );
    expect(exclusionOf(openai, "read")).toMatchObject({
      step: "provider",
      rule: "global.by_provider.openai.deny:read",
    });
    const agentOnly = applyPolicyPipeline(policyContext({ provider: "openai", agentPolicy: policy }));
    expect(exclusionOf(agentOnly, "read")).toMatchObject({ step: "agent_provider" });
    const anthropic = applyPolicyPipeline(policyContext({ provider: "anthropic", globalPolicy: policy }));
    expect(exclusionOf(anthropic, "read")).toBeUndefined();
  });

  it("builtin configs disable (enabled: false) and extend (enabled: true) the agent level", () => {
    const ctx = policyContext({
      agentPolicy: { profile: "minimal" },
      agentTools: [
        {
          type: "builtin",
          configs: [
            { name: "read", enabled: true },
            { name: "permissions_check", enabled: false },
          ],
        },
      ],
    });
    const result = applyPolicyPipeline(ctx);
    expect(names(result.tools)).toEqual(["permissions_describe", "read"]);
    expect(exclusionOf(result, "permissions_check")).toMatchObject({
      step: "agent",
      rule: "agent.tools.configs:permissions_check",
      reason: 'disabled by agent.tools config "permissions_check" (enabled: false)',
    });
  });

  it("allow lists apply to custom tools too; an empty allow list is no allow list", () => {
    const withAllow = applyPolicyPipeline(
      policyContext({ agentTools: [lookupSpec()], agentPolicy: { allow: ["read"] } }),
    );
    expect(names(withAllow.tools)).toEqual(["read"]);
    expect(exclusionOf(withAllow, "lookup_order")).toMatchObject({ step: "agent", rule: "agent.allow" });
    const emptyAllow = applyPolicyPipeline(policyContext({ agentPolicy: { allow: [] } }));
    expect(emptyAllow.excluded.filter((exclusion) => exclusion.step !== "tool_names")).toEqual([]);
  });
});

describe("environment step", () => {
  it("applies the environment's profile, allow and deny after the agent's", () => {
    const ctx = policyContext({
      environmentPolicy: {
        profile: "coding",
        deny: ["shell_run"],
        by_provider: { anthropic: { deny: ["bash"] } },
      },
      agentTools: [lookupSpec()],
    });
    const result = applyPolicyPipeline(ctx);
    expect(exclusionOf(result, "shell_run")).toMatchObject({
      step: "environment",
      reason: 'denied by environment.deny rule "shell_run"',
    });
    expect(exclusionOf(result, "bash")).toMatchObject({
      step: "environment",
      rule: "environment.by_provider.anthropic.deny:bash",
    });
    expect(names(result.tools)).toContain("lookup_order");
  });

  it("an environment profile filters managed tools", () => {
    const result = applyPolicyPipeline(policyContext({ environmentPolicy: { profile: "minimal" } }));
    expect(exclusionOf(result, "read")).toMatchObject({
      step: "environment",
      rule: "environment.profile:minimal",
    });
  });

  it("only narrows: its also_allow widens its own profile, never the agent's", () => {
    const ctx = policyContext({
      agentPolicy: { profile: "minimal" },
      environmentPolicy: { profile: "minimal", also_allow: ["read", "get_state"] },
    });
    const result = applyPolicyPipeline(ctx);
    expect(exclusionOf(result, "read")).toMatchObject({ step: "profile", rule: "profile:minimal" });
    const widerAgent = applyPolicyPipeline({
      ...ctx,
      agent: { ...ctx.agent, tool_policy: { profile: "full" } },
    });
    expect(names(widerAgent.tools)).toEqual([
      "get_state",
      "permissions_check",
      "permissions_describe",
      "read",
    ]);
  });
});

describe("sub-session depth and owner-only steps", () => {
  const spawner: ToolDefinition = {
    ...lookup,
    name: "spawn_session",
    ownership: "managed",
    group: "sessions",
    effects: ["spawn"],
    executor: "orchestrator",
  };
  const admin: ToolDefinition = {
    ...lookup,
    name: "cron_admin",
    ownership: "managed",
    group: "runtime",
    ownerOnly: true,
    executor: "orchestrator",
  };
  const registry = createToolRegistry([spawner, admin]);

  it("removes session-spawning tools at the maximum depth only", () => {
    const deep = applyPolicyPipeline({ ...policyContext({ subSessionDepth: 2 }), registry });
    expect(exclusionOf(deep, "spawn_session")).toEqual({
      tool: "spawn_session",
      step: "sub_session_depth",
      rule: "sub_session.max_depth:2",
      reason: "session depth 2 is at the maximum 2; tools that spawn sessions are removed",
    });
    const shallow = applyPolicyPipeline({ ...policyContext({ subSessionDepth: 1 }), registry });
    expect(names(shallow.tools)).toContain("spawn_session");
  });

  it("removes session-spawning tools once the session has spawned its maximum of children", () => {
    const full = applyPolicyPipeline({ ...policyContext({ subSessionChildren: 10 }), registry });
    expect(exclusionOf(full, "spawn_session")).toMatchObject({
      step: "sub_session_depth",
      rule: "sub_session.max_children:10",
    });
    const room = applyPolicyPipeline({ ...policyContext({ subSessionChildren: 9 }), registry });
    expect(names(room.tools)).toContain("spawn_session");
  });

  it("removes owner-only tools for a caller who is not the owner", () => {
    const result = applyPolicyPipeline({ ...policyContext({ isOwner: false }), registry });
    expect(exclusionOf(result, "cron_admin")).toEqual({
      tool: "cron_admin",
      step: "owner_only",
      rule: "owner_only",
      reason: "only the owner may use this tool; the caller is not the owner",
    });
    expect(names(applyPolicyPipeline({ ...policyContext(), registry }).tools)).toContain("cron_admin");
  });
});

function lookupSpec() {
  return {
    type: "custom" as const,
    name: "lookup_order",
    description: "Look an order up",
    input_schema: { type: "object" },
  };
}
