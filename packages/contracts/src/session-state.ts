import { z } from "zod";
import { MicroUsd } from "./cost";
import { ExecEvaluation, SandboxStatusValue, StopReason, TerminationReason } from "./events";
import { Id, Metadata } from "./ids";
import { McpServerListing } from "./mcp";
import { Budget, TokenUsage } from "./usage";

export const SessionStatus = z.enum(["idle", "running", "rescheduling", "terminated"]);
export type SessionStatus = z.infer<typeof SessionStatus>;

export const PendingAction = z.object({
  event_id: Id,
  kind: z.enum(["tool_confirmation", "custom_tool_result"]),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
  /** For a call the exec policy asked about: the command and variables the approver is allowing. */
  exec: ExecEvaluation.optional(),
});
export type PendingAction = z.infer<typeof PendingAction>;

export const DefinedOutcome = z.object({
  event_id: Id,
  title: z.string(),
  criteria: z.array(z.string()),
});
export type DefinedOutcome = z.infer<typeof DefinedOutcome>;

/**
 * The session projection: a pure fold of its events (packages/session-core). Stored as JSON next to the
 * session row and read back through this schema; `version` lets later code read older projections.
 */
export const SessionState = z.object({
  version: z.literal(1),
  status: SessionStatus,
  stop_reason: StopReason.nullable(),
  termination_reason: TerminationReason.nullable(),
  title: z.string().nullable(),
  metadata: Metadata,
  usage: TokenUsage,
  /**
   * What the session's model requests cost so far, in micro-USD (the last `session.usage` event's);
   * null when it is unknown (a request's model had no price). Projections stored before it: null.
   */
  cost_micro_usd: MicroUsd.nullable().default(null),
  budget: Budget,
  last_seq: z.number().int().nonnegative(),
  /** `user.message` and `user.define_outcome` events (input for the model) not yet consumed by a wake. */
  unprocessed_message_ids: z.array(Id),
  /** Actions the session waits on, in the order they were asked. */
  pending_actions: z.array(PendingAction),
  /** Answers that arrived for pending actions not yet consumed by a wake. */
  answered_action_ids: z.array(Id),
  /**
   * Tool calls a person answered (allow or deny) that have no result yet: the next wake runs or refuses
   * them. Projections stored before it existed read it as empty.
   */
  confirmed_call_ids: z.array(Id).default([]),
  /**
   * Calls an interrupt stopped before they ran (pending, or answered and not run yet): none of them may
   * run any more, and each still needs its `is_error` result.
   */
  interrupted_call_ids: z.array(Id).default([]),
  interrupt_requested: z.boolean(),
  sandbox_status: SandboxStatusValue.nullable(),
  child_session_ids: z.array(Id),
  /**
   * Tokens this session gave its sub-sessions: the budgets carved for those still going plus what
   * finished ones spent. They count against this session's budget like its own usage, so a parent
   * cannot spend what its children were given. Projections stored before it existed read it as 0.
   */
  delegated_tokens: z.number().int().nonnegative().default(0),
  /**
   * The latest outcome a person defined (`user.define_outcome`): its event id (the outcome's id), title
   * (the description's first line) and criteria. Projections stored before it existed read it as null.
   */
  defined_outcome: DefinedOutcome.nullable().default(null),
  /** The last `mcp.tools_listed`: the session's MCP tools come from here. Older projections: none. */
  mcp_servers: z.array(McpServerListing).default([]),
  /**
   * Deferred tools the session revealed, in the order it revealed them: found by `tool_search`
   * (`agent.tool_result.revealed_tools`) or called by name (`agent.tool_use`, `agent.mcp_tool_use`).
   * The request offers them after the core, in this order. Older projections: none.
   */
  revealed_tools: z.array(z.string()).default([]),
});
export type SessionState = z.infer<typeof SessionState>;
