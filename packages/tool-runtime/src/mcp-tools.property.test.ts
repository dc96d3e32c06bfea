import { type McpServerListing, McpServerSpec } from "@wakeloop/contracts";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { planBatch } from "./batch-planner";
import { callVerdict } from "./call-verdict";
import { mcpToolName } from "./mcp-tools";
import { sessionEffectiveTools } from "./session-tools";
import { mcpSession, platformSettings } from "./test-context";

// Invariant 4 for MCP tools: whatever servers, listings, policies, per-tool settings and calls a
// session has, a call to an MCP tool whose policy asks is never planned to run: it is rejected or waits
// for a person's allow. Only a call to a tool whose effective policy is always_allow may run at once,
// and a tool its settings disable never runs.

const serverName = fc.constantFrom("crm", "docs", "tickets");
const toolName = fc.constantFrom("find", "delete", "Update-Record", "list.all");
const policy = fc.constantFrom("always_allow" as const, "always_ask" as const);

const toolConfig = fc.record(
  { name: toolName, enabled: fc.boolean(), permission_policy: policy },
  { requiredKeys: ["name"] },
);
const serverSettings = fc.record({
  name: serverName,
  // The default policy is set at most once: server-level, in default_config, or not at all.
  policy: fc.option(policy, { nil: undefined }),
  defaultIn: fc.constantFrom("server" as const, "default_config" as const),
  enabled: fc.option(fc.boolean(), { nil: undefined }),
  configs: fc.uniqueArray(toolConfig, { selector: (config) => config.name, maxLength: 4 }),
});

const session = fc.record({
  servers: fc.uniqueArray(serverSettings, { selector: (s) => s.name, maxLength: 3 }),
  reachable: fc.func(fc.boolean()),
  tools: fc.uniqueArray(toolName, { minLength: 1, maxLength: 4 }),
  readOnly: fc.func(fc.boolean()),
  deny: fc.subarray(["mcp__crm__*", "mcp__docs__find", "group:mcp"]),
  calls: fc.array(
    fc.record({ server: serverName, tool: toolName, input: fc.constantFrom({}, { q: 1 }, { q: "x" }) }),
    { maxLength: 6 },
  ),
});

describe("no MCP tool runs without a recorded allow when its policy asks (fast-check)", () => {
  it("holds for generated servers, listings, policies and calls", () => {
    fc.assert(
      fc.property(session, (s) => {
        const specs = s.servers.map((server) =>
          McpServerSpec.parse({
            type: "url",
            name: server.name,
            url: `https://${server.name}.example.com/mcp`,
            ...(server.defaultIn === "server" ? { permission_policy: server.policy } : {}),
            default_config: {
              enabled: server.enabled,
              permission_policy: server.defaultIn === "default_config" ? server.policy : undefined,
            },
            configs: server.configs,
          }),
        );
        // What the settings say, read straight from the generated values.
        const expected = (serverName: string, tool: string) => {
          const server = s.servers.find((entry) => entry.name === serverName);
          const config = server?.configs.find((entry) => entry.name === tool);
          return {
            asks: (config?.permission_policy ?? server?.policy ?? "always_ask") === "always_ask",
            disabled: (config?.enabled ?? server?.enabled ?? true) === false,
          };
        };
        const listings: McpServerListing[] = specs.map((spec) =>
          s.reachable(spec.name)
            ? {
                name: spec.name,
                status: "ready",
                tools: s.tools.map((name) => ({
                  name,
                  input_schema: { type: "object" },
                  read_only: s.readOnly(name),
                })),
              }
            : { name: spec.name, status: "unreachable", reason: "down" },
        );
        const effective = sessionEffectiveTools(
          mcpSession(specs, listings, { deny: s.deny }),
          platformSettings,
        );
        const byName = new Map(effective.tools.map((tool) => [tool.name, tool]));
        const calls = s.calls.map((call, index) => ({
          id: `c${index}`,
          name: mcpToolName(call.server, call.tool),
          input: call.input,
        }));
        const plan = planBatch(calls, effective);
        for (const planned of plan.calls) {
          const tool = byName.get(planned.name);
          const verdict = callVerdict({
            planned,
            tool,
            exec: { verdict: "allow", reason: "" },
            loop: { verdict: "ok" },
          });
          const call = s.calls.find((entry) => mcpToolName(entry.server, entry.tool) === planned.name);
          const attached = specs.some((spec) => spec.name === call?.server);
          const settings = call ? expected(call.server, call.tool) : undefined;
          if (attached && settings?.asks) expect(verdict.kind).not.toBe("run");
          if (attached && settings?.disabled) expect(verdict.kind).toBe("reject");
          if (verdict.kind === "run") {
            expect(tool?.permissionPolicy).toBe("always_allow");
            expect(tool?.ownership).toBe("mcp");
          }
          // An unreachable server's or a denied tool is never offered, so it cannot even ask.
          if (tool === undefined) expect(verdict.kind).toBe("reject");
        }
      }),
      { numRuns: 300 },
    );
  });
});
