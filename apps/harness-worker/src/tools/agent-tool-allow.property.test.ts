import { AgentSpec, type ToolPolicy } from "@wakeloop/contracts";
import { initialSessionState } from "@wakeloop/session-core";
import { type AgentDefinedToolSpec, agentToolName, sessionEffectiveTools } from "@wakeloop/tool-runtime";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SessionView } from "../session/session-view";
import { planModelCalls } from "./plan-calls";
import { resumeStep } from "./run-calls";

// Invariant 4 for agent-defined tools: whatever the agent's tools, the policies, the model's calls and
// the answers that come back, no call of an agent-defined tool runs unless a person's allow for that
// exact call id is recorded. Planning never puts such a call in a group that runs now (it is announced
// as "ask" and waits), and a later wake runs a waiting call only with an allow for its own id.

const names = ["double_it", "fetch_rows", "send_report"] as const;

const specArb: fc.Arbitrary<AgentDefinedToolSpec> = fc.record({
  name: fc.constantFrom(...names),
  description: fc.constant("an agent-defined tool"),
  parameterSchema: fc.constant({ type: "object", properties: { n: { type: "number" } } }),
  version: fc.integer({ min: 1, max: 5 }),
  enabled: fc.boolean(),
});

const selectorArb = fc.constantFrom(
  "group:agent_tools",
  "agent__*",
  ...names.map(agentToolName),
  "group:runtime",
  "read",
  "*",
);
const policyArb: fc.Arbitrary<ToolPolicy> = fc.record(
  {
    allow: fc.array(selectorArb, { maxLength: 3 }),
    also_allow: fc.array(selectorArb, { maxLength: 2 }),
    deny: fc.array(selectorArb, { maxLength: 2 }),
    profile: fc.constantFrom("minimal", "coding", "messaging", "full"),
  },
  { requiredKeys: [] },
);

const callArb = fc.record({
  name: fc.constantFrom(...names.map(agentToolName), "get_state"),
  input: fc.oneof(fc.record({ n: fc.integer() }), fc.record({ n: fc.string() }), fc.constant({})),
});

const answerArb = fc.constantFrom("allow", "deny", "none", "allow_for_other_call");

function view(agentPolicy: ToolPolicy, agentTools: AgentDefinedToolSpec[]): SessionView {
  const result = new SessionView({
    tenantId: "tnt_1",
    sessionId: "sesn_1",
    agentId: "agent_1",
    agent: AgentSpec.parse({
      name: "a",
      model: { provider: "anthropic", id: "claude" },
      tool_policy: agentPolicy,
      // Even a toolset default of always_allow is for managed tools: agent-defined tools keep asking.
      tools: [{ type: "builtin", default_permission_policy: "always_allow" }],
    }),
    environment: null,
    parentSessionId: null,
    depth: 0,
    state: initialSessionState({ title: null, metadata: {}, budget: { max_total_tokens: null } }),
    events: [],
  });
  result.agentTools = agentTools;
  return result;
}

describe("agent-defined tools and recorded allows (invariant 4)", () => {
  it("no agent-defined tool call runs without an allow recorded for its own id", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(specArb, { selector: (spec) => spec.name, maxLength: 3 }),
        policyArb,
        fc.array(callArb, { minLength: 1, maxLength: 6 }),
        fc.array(fc.tuple(answerArb, fc.boolean(), fc.boolean(), fc.boolean(), fc.boolean()), {
          minLength: 6,
          maxLength: 6,
        }),
        (specs, agentPolicy, calls, answers) => {
          const session = view(agentPolicy, specs);
          const effective = sessionEffectiveTools(
            {
              agent: session.agent,
              environmentPolicy: null,
              depth: 0,
              childCount: 0,
              sandboxStatus: "ready",
              memoryReady: true,
              agentTools: specs,
              revealedTools: [],
              sandboxImage: null,
              environmentMcpServers: [],
              mcpListings: [],
            },
            {
              globalToolPolicy: {},
              maxSubSessionDepth: 3,
              webSearch: false,
              maxChildrenPerSession: 10,
              browserImages: [],
            },
          );
          for (const tool of effective.tools) {
            if (tool.ownership === "agent") expect(tool.permissionPolicy).toBe("always_ask");
          }
          const plan = planModelCalls(
            session,
            effective,
            calls.map((call, index) => ({ id: `call_${index}`, ...call })),
            new Set(),
          );
          const running = new Set(plan.groups.flat().map((call) => call.id));
          plan.announce.forEach((event, index) => {
            if (event.type !== "agent.tool_use" || !event.name.startsWith("agent__")) return;
            // Never planned to run now: it waits for a person, or it is refused.
            expect(running.has(event.id ?? "")).toBe(false);
            expect(event.evaluated_permission).not.toBe("allow");
            if (event.evaluated_permission === "ask") expect(plan.pendingIds).toContain(event.id);

            // A later wake: whatever answer (or none) came back, and whatever else happened.
            const [answer, pending, stopped, started, aborted] = answers[index] ?? [
              "none",
              false,
              false,
              false,
              false,
            ];
            const tool = effective.tools.find((candidate) => candidate.name === event.name);
            const step = resumeStep({
              permission: event.evaluated_permission ?? "deny",
              pending,
              // An allow given for another call never counts for this one.
              answer: answer === "allow" || answer === "deny" ? answer : undefined,
              stopped,
              tool,
              started,
              aborted,
            });
            if (step === "run") expect(answer).toBe("allow");
          });
        },
      ),
      { numRuns: 300 },
    );
  });
});
