import { SessionStatus, type ToolDefinition } from "@wakeloop/contracts";
import { z } from "zod";
import { managedTool, READ_ONLY_INLINE } from "./define";

// Session navigation (openboa "session navigation"): read-only, bounded views of this agent's own
// sessions, executed inline by the harness. Another agent's or tenant's session is never found.

/** A session of this agent; omitted, the current session. */
const SessionRef = z
  .string()
  .min(1)
  .max(100)
  .describe("A session of this agent; defaults to the current session");
const PageLimit = (max: number, fallback: number) =>
  z.number().int().min(1).max(max).default(fallback).describe(`At most this many (1-${max})`);

/** A page of sessions, newest first. */
const sessionPage = {
  limit: PageLimit(50, 20),
  after_id: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe("Continue after this session id (from next_after_id)"),
};

export const Lineage = z.enum(["related", "parent", "children", "siblings"]);
export const OutcomeStatus = z.enum(["no_outcome", "not_ready", "promotion_ready"]);
export const OutcomeTrendFilter = z.enum(["first_iteration", "improving", "stable", "regressing"]);
export type Lineage = z.infer<typeof Lineage>;

export const SessionListInput = z.object({
  status: SessionStatus.optional().describe("Only sessions with this status"),
  has_outcome: z
    .boolean()
    .optional()
    .describe("Only sessions that have (true) or lack (false) a defined outcome"),
  active_minutes: z
    .number()
    .int()
    .min(1)
    .max(525_600)
    .optional()
    .describe("Only sessions with activity in the last this many minutes"),
  lineage: Lineage.optional().describe(
    "Stay near the current session: its parent, children, siblings, or all three (related)",
  ),
  outcome_status: OutcomeStatus.optional().describe(
    "Only sessions whose evaluator posture is this: no_outcome, not_ready or promotion_ready",
  ),
  outcome_trend: OutcomeTrendFilter.optional().describe(
    "Only sessions whose outcome's graded attempts move this way (first_iteration, improving, stable, regressing)",
  ),
  promotion_ready: z
    .boolean()
    .optional()
    .describe("Only sessions whose latest attempt passed without regressing (true), or not (false)"),
  ...sessionPage,
});
export type SessionListInput = z.infer<typeof SessionListInput>;

export const SessionListChildrenInput = z.object({
  session_id: SessionRef.optional(),
  ...sessionPage,
});
export type SessionListChildrenInput = z.infer<typeof SessionListChildrenInput>;

export const SessionRefInput = z.object({ session_id: SessionRef.optional() });
export type SessionRefInput = z.infer<typeof SessionRefInput>;

export const SessionGetEventsInput = z.object({
  session_id: SessionRef.optional(),
  after_seq: z.number().int().min(0).default(0).describe("Events after this seq (from next_after_seq)"),
  limit: PageLimit(50, 20),
  types: z
    .array(z.string().min(1).max(64))
    .max(20)
    .optional()
    .describe("Only these event types, e.g. agent.message, agent.tool_use"),
});
export type SessionGetEventsInput = z.infer<typeof SessionGetEventsInput>;

export const SessionGetTraceInput = z.object({
  session_id: SessionRef.optional(),
  wake_id: z.string().min(1).max(100).optional().describe("The wake to read; defaults to the latest wake"),
  limit: PageLimit(200, 100),
});
export type SessionGetTraceInput = z.infer<typeof SessionGetTraceInput>;

export const AgentCompareSetupInput = z.object({
  session_id: z.string().min(1).max(100).describe("The session of this agent to compare with"),
  other_session_id: SessionRef.optional(),
});
export type AgentCompareSetupInput = z.infer<typeof AgentCompareSetupInput>;

const common = { ...READ_ONLY_INLINE, group: "sessions" } as const;

export const navigationTools: ToolDefinition[] = [
  managedTool({
    ...common,
    name: "session_list",
    description:
      "List this agent's sessions, newest first, with status, pending action, outcome, lineage relation, " +
      "child count and setup fingerprint. Filters: status, has_outcome, active_minutes, lineage.",
    input: SessionListInput,
  }),
  managedTool({
    ...common,
    name: "session_list_children",
    description: "List the child sessions of this session (or of another session of this agent).",
    input: SessionListChildrenInput,
  }),
  managedTool({
    ...common,
    name: "session_get_snapshot",
    description:
      "A bounded snapshot of one session of this agent: status, pending actions, usage, last agent " +
      "message, recent wakes, lineage, setup match, and which tool to reread with next.",
    input: SessionRefInput,
  }),
  managedTool({
    ...common,
    name: "session_get_events",
    description:
      "Read a page of one session's events in seq order (bounded; long events are truncated). Page with " +
      "after_seq = next_after_seq.",
    input: SessionGetEventsInput,
  }),
  managedTool({
    ...common,
    name: "session_get_trace",
    description:
      "Read the spans of one wake (the latest by default) of a session of this agent: model calls, tool " +
      "executions and the service calls they caused, with durations and status.",
    input: SessionGetTraceInput,
  }),
  managedTool({
    ...common,
    name: "session_describe_context",
    description:
      "Describe the context budget of this session (or another of this agent): prompt, tool schema and " +
      "history tokens, what no longer fits, a pressure level and the narrower tools to use instead.",
    input: SessionRefInput,
  }),
  managedTool({
    ...common,
    name: "agent_describe_setup",
    description:
      "Describe the setup a session of this agent runs with (model, prompt, tools, policy, environment) " +
      "and its fingerprints, so work from sessions with the same setup can be compared.",
    input: SessionRefInput,
  }),
  managedTool({
    ...common,
    name: "agent_compare_setup",
    description:
      "Compare the setup of two sessions of this agent (the current one by default): whether the " +
      "fingerprints match and which sections (model, prompt, tools, policy, environment) changed.",
    input: AgentCompareSetupInput,
  }),
];
