import { AgentSpec, BrowserToolName, type SandboxStatusValue, type ToolPolicy } from "@wakeloop/contracts";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { planBatch } from "./batch-planner";
import { managedTools } from "./builtins";
import { agentCodeTools } from "./builtins/agent-code";
import { dataTools } from "./builtins/data";
import { memoryTools } from "./builtins/memory";
import { navigationTools } from "./builtins/navigation";
import { outcomeTools } from "./builtins/outcomes";
import { SPAWN_ALIASES } from "./builtins/sub-sessions";
import { uiTools } from "./builtins/ui";
import { webTools } from "./builtins/web";
import { EffectiveToolSet } from "./effective-tool-set";
import { computeEffectiveTools, toolProviderOf } from "./effective-tools";
import { agentToolRegistry, createToolRegistry, customToolDefinition } from "./registry";
import { browserSandboxReady, noSandbox, policyContext, sandboxReady } from "./test-context";

const sandboxToolNames = managedTools.filter((tool) => tool.executor === "sandbox").map((tool) => tool.name);
const navigationToolNames = navigationTools.map((tool) => tool.name);
const names = (set: EffectiveToolSet) => set.tools.map((tool) => tool.name);

describe("verification matrix (aos P7)", () => {
  it("1. no sandbox: no sandbox tools, each excluded by runtime gating", () => {
    const set = computeEffectiveTools(policyContext(), noSandbox);
    for (const name of sandboxToolNames) expect(names(set)).not.toContain(name);
    const gated = set.excluded.filter((exclusion) => exclusion.step === "runtime_gating").map((e) => e.tool);
    // report_result is for sub-sessions only; this is a root session.
    expect(gated.sort()).toEqual([...sandboxToolNames, "report_result"].sort());
    expect(names(set)).toEqual(
      [
        "ask_user",
        "delete_state",
        "get_state",
        "list_state_keys",
        "permissions_check",
        "permissions_describe",
        "set_state",
        "cancel_reminder",
        "cancel_scheduled_task",
        "create_scheduled_task",
        "disable_scheduled_task",
        "enable_scheduled_task",
        "list_scheduled_tasks",
        "set_reminder",
        ...memoryTools.map((tool) => tool.name),
        "read_system_prompt",
        "edit_system_prompt",
        ...navigationToolNames,
        ...webTools.map((tool) => tool.name).filter((name) => name !== "fetch_url"),
        ...dataTools.map((tool) => tool.name),
        ...uiTools.map((tool) => tool.name),
        "spawn_session",
        "session_run_child",
        "sessions_send",
        "subagents",
        "tool_search",
        "wait_for_sessions",
        ...outcomeTools.map((tool) => tool.name),
        ...agentCodeTools.map((tool) => tool.name),
        "vault_list",
      ].sort(),
    );
  });

  it("1b. no search backend: web_search is excluded by runtime gating, the fetch tools stay", () => {
    const set = computeEffectiveTools(policyContext(), { ...sandboxReady, webSearch: false });
    expect(names(set)).toEqual(expect.arrayContaining(["web_fetch", "web_read"]));
    expect(names(set)).not.toContain("web_search");
    expect(set.excluded).toContainEqual({
      tool: "web_search",
      step: "runtime_gating",
      rule: "availability:web.search",
      reason: "needs web.search; the operator configured no search backend (WEB_SEARCH_URL)",
    });
  });

  it("2. sandbox becomes ready: the sandbox tools appear (provider preference and aliases aside)", () => {
    const set = computeEffectiveTools(policyContext(), browserSandboxReady);
    for (const name of sandboxToolNames.filter((name) => name !== "apply_patch" && name !== "browser"))
      expect(names(set)).toContain(name);
    expect(set.excluded).toEqual([
      {
        tool: "apply_patch",
        step: "provider_preference",
        rule: "provider_preference:edit",
        reason: "anthropic models edit files with edit; apply_patch is hidden while edit is available",
      },
      {
        tool: "browser",
        step: "provider_preference",
        rule: "alias_of:browser_navigate",
        reason:
          "browser is another name of browser_navigate; it is hidden while browser_navigate is available",
      },
      {
        tool: "fetch_url",
        step: "provider_preference",
        rule: "alias_of:web_fetch",
        reason: "fetch_url is another name of web_fetch; it is hidden while web_fetch is available",
      },
      {
        tool: "report_result",
        step: "runtime_gating",
        rule: "availability:session.is_child",
        reason: "needs session.is_child; this is a root session",
      },
      // One name per implementation: spawn_session's other names are hidden by the default naming.
      ...[...SPAWN_ALIASES].sort().map((alias) => ({
        tool: alias,
        step: "tool_names",
        rule: "tool_names:personal_agent",
        reason: `${alias} is another name of spawn_session (one implementation); the "personal_agent" tool names (default) offer spawn_session`,
      })),
    ]);
  });

  it("2b. a ready sandbox of an image without Chromium: the browser tools are gated, saying why", () => {
    const set = computeEffectiveTools(policyContext(), sandboxReady);
    const family = new Set<string>(BrowserToolName.options);
    const browser = set.excluded.filter((exclusion) => family.has(exclusion.tool));
    expect(browser.map((exclusion) => exclusion.tool).sort()).toEqual([...BrowserToolName.options].sort());
    for (const exclusion of browser) {
      expect(exclusion).toMatchObject({ step: "runtime_gating", rule: "availability:sandbox.browser" });
      expect(exclusion.reason).toContain("wakeloop-sandbox:bookworm has no browser");
    }
  });

  it.each(["closed", "error", "provisioning"] as const)(
    "3. sandbox %s: the sandbox tools go again",
    (status) => {
      const ready = computeEffectiveTools(policyContext(), sandboxReady);
      const after = computeEffectiveTools(policyContext(), {
        sandboxStatus: status,
        memoryReady: true,
        webSearch: true,
        sandboxImage: sandboxReady.sandboxImage,
      });
      expect(names(after)).toEqual(names(computeEffectiveTools(policyContext(), noSandbox)));
      expect(names(ready).length).toBeGreaterThan(names(after).length);
    },
  );

  it("4. parallel planning on the computed set: independent reads together, same key serialized", () => {
    const set = computeEffectiveTools(policyContext(), sandboxReady);
    const plan = planBatch(
      [
        { id: "1", name: "read", input: { path: "a" } },
        { id: "2", name: "glob", input: { pattern: "*.ts" } },
        { id: "3", name: "shell_wait", input: {} },
        { id: "4", name: "shell_wait", input: { shell_id: "main" } },
        { id: "5", name: "write", input: { path: "a", content: "" } },
        { id: "6", name: "edit", input: { path: "a", old_string: "x", new_string: "y" } },
      ],
      set,
    );
    expect(plan.groups).toEqual([["1", "2", "3"], ["4"], ["5"], ["6"]]);
  });

  it("5. provider switch: openai gets apply_patch, anthropic and gemini get edit", () => {
    const openai = computeEffectiveTools(policyContext({ provider: "openai" }), sandboxReady);
    expect(names(openai)).toContain("apply_patch");
    expect(names(openai)).not.toContain("edit");
    expect(openai.excluded).toContainEqual(
      expect.objectContaining({ tool: "edit", step: "provider_preference" }),
    );
    for (const provider of ["anthropic", "gemini"] as const) {
      const set = computeEffectiveTools(policyContext({ provider }), sandboxReady);
      expect(names(set)).toContain("edit");
      expect(names(set)).not.toContain("apply_patch");
    }
    expect(toolProviderOf({ provider: "openai_compatible" })).toBe("openai");
    expect(toolProviderOf({ provider: "anthropic" })).toBe("anthropic");
  });

  it("6. first run needs no registry set-up: a freshly parsed agent spec is enough", () => {
    const spec = AgentSpec.parse({ name: "a", model: { provider: "anthropic", id: "claude" } });
    const set = computeEffectiveTools(
      {
        registry: agentToolRegistry(spec),
        globalPolicy: {},
        agent: spec,
        environmentPolicy: null,
        provider: toolProviderOf(spec.model),
        subSessionDepth: 0,
        maxSubSessionDepth: 2,
        subSessionChildren: 0,
        maxSubSessionChildren: 10,
        isOwner: true,
      },
      noSandbox,
    );
    expect(names(set)).toContain("ask_user");
    expect(EffectiveToolSet.parse(JSON.parse(JSON.stringify(set)))).toEqual(set);
  });

  it("7. replay: the same sequence of facts and calls yields byte-identical sets and plans", () => {
    const statuses: Array<SandboxStatusValue | null> = [
      null,
      "provisioning",
      "ready",
      "closed",
      "ready",
      "error",
    ];
    const run = () =>
      statuses.map((sandboxStatus) => {
        const set = computeEffectiveTools(policyContext({ provider: "openai" }), {
          sandboxStatus,
          memoryReady: true,
          webSearch: true,
          sandboxImage: sandboxReady.sandboxImage,
        });
        const plan = planBatch(
          [
            { id: "a", name: "read", input: { path: "x" } },
            { id: "b", name: "apply_patch", input: { patch: "p" } },
            { id: "c", name: "get_state", input: { key: "k" } },
          ],
          set,
        );
        return JSON.stringify({ set, plan });
      });
    expect(run()).toEqual(run());
    // And the history really changes with the facts (the replay is not trivially constant).
    expect(new Set(run()).size).toBeGreaterThan(1);
  });
});

describe("effective permissions", () => {
  it("carries the resolved policy and its source on each tool", () => {
    const set = computeEffectiveTools(
      policyContext({
        agentTools: [
          {
            type: "builtin",
            default_permission_policy: "always_ask",
            configs: [{ name: "read", permission_policy: "always_allow" }],
          },
        ],
      }),
      sandboxReady,
    );
    const tool = (name: string) => set.tools.find((candidate) => candidate.name === name);
    expect(tool("read")).toMatchObject({
      permissionPolicy: "always_allow",
      permissionSource: "agent_config",
    });
    expect(tool("grep")).toMatchObject({
      permissionPolicy: "always_ask",
      permissionSource: "toolset_default",
    });
  });
});

describe("determinism properties", () => {
  const selectorPool = [
    "read",
    "write",
    "shell_*",
    "group:fs",
    "group:state",
    "group:runtime",
    "get_state",
    "ask_user",
    "*_state",
    "lookup_order",
    "group:custom",
  ];
  const listArb = fc.option(fc.subarray(selectorPool), { nil: undefined });
  const policyArb: fc.Arbitrary<ToolPolicy> = fc.record(
    {
      profile: fc.constantFrom("minimal", "coding", "messaging", "full"),
      allow: listArb,
      also_allow: listArb,
      deny: listArb,
      by_provider: fc.record(
        {
          openai: fc.record(
            { deny: listArb, profile: fc.constantFrom("minimal", "coding", "full") },
            { requiredKeys: [] },
          ),
        },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: [] },
  );
  const factsArb = fc.record({
    sandboxStatus: fc.constantFrom<SandboxStatusValue | null>(
      null,
      "provisioning",
      "ready",
      "closed",
      "error",
    ),
    memoryReady: fc.boolean(),
    webSearch: fc.boolean(),
    sandboxImage: fc.constantFrom(null, { name: "a:1", browser: false }, { name: "b:1", browser: true }),
  });
  const lookup = {
    type: "custom" as const,
    name: "lookup_order",
    description: "Look up",
    input_schema: { type: "object" },
  };

  it("the same state gives byte-identical effective sets whatever the order of registry and selector lists", () => {
    fc.assert(
      fc.property(
        policyArb,
        policyArb,
        fc.option(policyArb, { nil: null }),
        factsArb,
        fc.constantFrom("anthropic", "openai", "gemini" as const),
        fc.nat(),
        (globalPolicy, agentPolicy, environmentPolicy, facts, provider, seed) => {
          const ctx = policyContext({
            globalPolicy,
            agentPolicy,
            environmentPolicy,
            provider,
            agentTools: [lookup],
          });
          const shuffledCtx = {
            ...ctx,
            registry: createToolRegistry(rotate([...managedTools, customToolDefinition(lookup)], seed)),
            globalPolicy: reversePolicy(globalPolicy),
            agent: { ...ctx.agent, tool_policy: reversePolicy(agentPolicy) },
            environmentPolicy: environmentPolicy && reversePolicy(environmentPolicy),
          };
          const expected = JSON.stringify(computeEffectiveTools(ctx, facts));
          expect(JSON.stringify(computeEffectiveTools(shuffledCtx, facts))).toBe(expected);
          expect(JSON.stringify(computeEffectiveTools(ctx, facts))).toBe(expected);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("tools are sorted by name, and every registry tool is either offered or excluded exactly once", () => {
    fc.assert(
      fc.property(policyArb, factsArb, (agentPolicy, facts) => {
        const ctx = policyContext({ agentPolicy, agentTools: [lookup] });
        const set = computeEffectiveTools(ctx, facts);
        const offered = names(set);
        expect(offered).toEqual([...offered].sort());
        const all = [...offered, ...set.excluded.map((exclusion) => exclusion.tool)].sort();
        expect(all).toEqual(ctx.registry.tools.map((tool) => tool.name));
      }),
      { numRuns: 200 },
    );
  });
});

function reversePolicy(policy: ToolPolicy): ToolPolicy {
  const reverse = (list: string[] | undefined) => (list ? [...list].reverse() : list);
  return {
    ...policy,
    allow: reverse(policy.allow),
    also_allow: reverse(policy.also_allow),
    deny: reverse(policy.deny),
    ...(policy.by_provider?.openai
      ? {
          by_provider: {
            openai: { ...policy.by_provider.openai, deny: reverse(policy.by_provider.openai.deny) },
          },
        }
      : {}),
  };
}

function rotate<T>(items: readonly T[], seed: number): T[] {
  const offset = items.length === 0 ? 0 : seed % items.length;
  return [...items.slice(offset), ...items.slice(0, offset)].reverse();
}
