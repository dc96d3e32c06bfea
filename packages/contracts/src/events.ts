import { z } from "zod";
import { Content } from "./content";
import { UsageCost } from "./cost";
import { Id, Timestamp } from "./ids";
import { McpServerListing } from "./mcp";
import { UiBlocks, UiTitle } from "./ui-blocks";
import { Budget, TokenUsage } from "./usage";

/**
 * The public event vocabulary (DESIGN.md §4). Payloads are flat on the event, as in the hosted
 * managed-agents protocol. A tool use's event id is its `tool_use_id`.
 */

const JsonObject = z.record(z.string(), z.unknown());

// ---- user → session --------------------------------------------------------------------------

export const UserMessage = z.object({ type: z.literal("user.message"), content: Content.min(1) });
export const UserInterrupt = z.object({ type: z.literal("user.interrupt") });
export const UserToolConfirmation = z.object({
  type: z.literal("user.tool_confirmation"),
  tool_use_id: Id,
  result: z.enum(["allow", "deny"]),
  deny_message: z.string().max(4_000).optional(),
});
export const UserCustomToolResult = z.object({
  type: z.literal("user.custom_tool_result"),
  custom_tool_use_id: Id,
  content: Content,
  is_error: z.boolean().optional(),
});
export const UserDefineOutcome = z.object({
  type: z.literal("user.define_outcome"),
  description: z.string().min(1).max(20_000),
  criteria: z.array(z.string().max(2_000)).max(50).optional(),
});

/** What a client may append through the API: a field the API does not know is refused, not dropped. */
export const UserEventInput = z.discriminatedUnion("type", [
  UserMessage.strict(),
  UserInterrupt.strict(),
  UserToolConfirmation.strict(),
  UserCustomToolResult.strict(),
  UserDefineOutcome.strict(),
]);
export type UserEventInput = z.infer<typeof UserEventInput>;

// ---- agent ------------------------------------------------------------------------------------

export const EvaluatedPermission = z.enum(["allow", "ask", "deny"]);
export type EvaluatedPermission = z.infer<typeof EvaluatedPermission>;

export const AgentMessage = z.object({ type: z.literal("agent.message"), content: Content });
export const AgentThinking = z.object({ type: z.literal("agent.thinking") });
/**
 * What the environment's exec policy saw in a sandbox call, recorded so an approver sees what the call
 * runs and with which variables before allowing it: the command line (null when the call only sets
 * variables), the variables the call sets, and why the policy answered as it did.
 */
export const ExecEvaluation = z.object({
  command: z.string().nullable(),
  env: z.record(z.string(), z.string()),
  reason: z.string(),
});
export type ExecEvaluation = z.infer<typeof ExecEvaluation>;

export const AgentToolUse = z.object({
  type: z.literal("agent.tool_use"),
  name: z.string(),
  input: JsonObject,
  evaluated_permission: EvaluatedPermission,
  /** Set on calls the exec policy governs (sandbox commands, variables that choose code). */
  exec: ExecEvaluation.optional(),
});
export const AgentToolResult = z.object({
  type: z.literal("agent.tool_result"),
  tool_use_id: Id,
  content: Content,
  is_error: z.boolean(),
  /**
   * Deferred tools a `tool_search` result revealed (docs/tool-search.md): offered to the model from its
   * next step on, in this order, after the tools it already has.
   */
  revealed_tools: z.array(z.string()).optional(),
});
/** A chat message from `send_message`: shown to the user, not part of the model's own turn text. */
export const AgentUiMessage = z.object({
  type: z.literal("agent.ui_message"),
  tool_use_id: Id,
  text: z.string(),
});
/** Blocks from `render_blocks`, for the client to render (markdown, table, chart, form, …). */
export const AgentUiBlocks = z.object({
  type: z.literal("agent.ui_blocks"),
  tool_use_id: Id,
  title: UiTitle.optional(),
  blocks: UiBlocks,
});
export const AgentMcpToolUse = z.object({
  type: z.literal("agent.mcp_tool_use"),
  name: z.string(),
  mcp_server_name: z.string(),
  input: JsonObject,
  evaluated_permission: EvaluatedPermission,
});
export const AgentMcpToolResult = z.object({
  type: z.literal("agent.mcp_tool_result"),
  mcp_tool_use_id: Id,
  content: Content,
  is_error: z.boolean(),
});
/**
 * The tools the worker listed from the session's MCP servers at a wake's start, committed when they
 * differ from the last listing: the effective tools are a function of this (invariant 6), and `/tools`
 * explains an unreachable server from it.
 */
export const McpToolsListed = z.object({
  type: z.literal("mcp.tools_listed"),
  servers: z.array(McpServerListing),
});
export const AgentCustomToolUse = z.object({
  type: z.literal("agent.custom_tool_use"),
  name: z.string(),
  input: JsonObject,
});

// ---- session ----------------------------------------------------------------------------------

export const StopReason = z.discriminatedUnion("type", [
  z.object({ type: z.literal("end_turn") }),
  z.object({ type: z.literal("requires_action"), event_ids: z.array(Id).min(1) }),
  z.object({ type: z.literal("retries_exhausted") }),
  z.object({ type: z.literal("budget_reached") }),
]);
export type StopReason = z.infer<typeof StopReason>;

export const SessionStatusRunning = z.object({ type: z.literal("session.status_running") });
export const SessionStatusIdle = z.object({
  type: z.literal("session.status_idle"),
  stop_reason: StopReason,
});
export const SessionStatusRescheduled = z.object({ type: z.literal("session.status_rescheduled") });
export const TerminationReason = z.enum(["completed", "error", "archived"]);
export const SessionStatusTerminated = z.object({
  type: z.literal("session.status_terminated"),
  reason: TerminationReason,
});

export const RetryStatus = z.discriminatedUnion("type", [
  z.object({ type: z.literal("retrying"), attempt: z.number().int().positive(), next_retry_at: Timestamp }),
  z.object({ type: z.literal("exhausted") }),
  z.object({ type: z.literal("terminal") }),
]);
export type RetryStatus = z.infer<typeof RetryStatus>;

export const SessionErrorType = z.enum([
  "model_overloaded",
  "model_rate_limited",
  "model_request_failed",
  "model_invalid_request",
  "loop_detected",
  "tool_execution_failed",
  "lease_lost",
  "internal_error",
]);
export type SessionErrorType = z.infer<typeof SessionErrorType>;

export const SessionError = z.object({
  type: z.literal("session.error"),
  error: z.object({ type: SessionErrorType, message: z.string(), retry_status: RetryStatus }),
});
export const SessionUsage = z.object({
  type: z.literal("session.usage"),
  usage: TokenUsage,
  budget: Budget,
  /** At the worker's price table; absent on events written before costs were kept. */
  cost: UsageCost.optional(),
});
export const SessionUpdated = z.object({
  type: z.literal("session.updated"),
  title: z.string().max(500).nullable().optional(),
  metadata: z.record(z.string(), z.string()).optional(),
  budget: Budget.optional(),
});
export const SessionChildCreated = z.object({
  type: z.literal("session.child_created"),
  child_session_id: Id,
  /**
   * The tokens carved from this session's budget for the child (its `max_total_tokens`), held back
   * from this session until the child finishes; absent (none held) before budgets were carved.
   */
  token_budget: z.number().int().nonnegative().optional(),
});
/** How a sub-session ended, as its parent's `wait_for_sessions` reports it. */
export const ChildSessionStatus = z.enum([
  "completed",
  "error",
  "archived",
  "budget_reached",
  "retries_exhausted",
]);
export type ChildSessionStatus = z.infer<typeof ChildSessionStatus>;
/**
 * On the parent: a sub-session finished (it reported, ended, or can go no further on its own). The
 * orchestrator appends it once per child; `result` is what the child passed to `report_result`, else its
 * last message, best effort.
 */
export const SessionChildCompleted = z.object({
  type: z.literal("session.child_completed"),
  child_session_id: Id,
  status: ChildSessionStatus,
  result: z.string().nullable(),
  /**
   * What the child spent (its tokens and those its own children spent), charged to this session in
   * place of the `token_budget` held for it at `session.child_created`; absent on older events.
   */
  tokens_used: z.number().int().nonnegative().optional(),
  /** The `token_budget` the parent held for the child, released by this event. */
  token_budget: z.number().int().nonnegative().optional(),
});
/**
 * On each ancestor: a sub-session (at any depth) waits on a person for these calls, so the ancestor's
 * stream shows it; answer them on the ancestor or on the sub-session. `idle_event_id` is the
 * sub-session's `requires_action` idle that raised it (one of these per ancestor per idle).
 */
export const SessionChildRequiresAction = z.object({
  type: z.literal("session.child_requires_action"),
  child_session_id: Id,
  idle_event_id: Id,
  event_ids: z.array(Id),
});
export const WakeReason = z.enum([
  "user_message",
  "tool_confirmation",
  "custom_tool_result",
  "budget_raised",
  "child_completed",
  "reminder",
  "scheduled_task",
  "rescheduled",
]);
export type WakeReason = z.infer<typeof WakeReason>;
export const SessionWakeQueued = z.object({
  type: z.literal("session.wake_queued"),
  reason: WakeReason,
  due_at: Timestamp,
});
export const SandboxStatusValue = z.enum(["provisioning", "ready", "closed", "error"]);
export type SandboxStatusValue = z.infer<typeof SandboxStatusValue>;
export const SandboxStatus = z.object({
  type: z.literal("sandbox.status"),
  status: SandboxStatusValue,
  message: z.string().optional(),
});

/**
 * What a wake's start recalled from the agent's memory for the new input, within its budget. The
 * model reads `text` in the history right after the messages that asked, so the prompt before them
 * stays the same from wake to wake (a cached prefix); events written before it carried no `text`.
 */
export const SessionMemoryRecalled = z.object({
  type: z.literal("session.memory_recalled"),
  /** The recalled entries as the model reads them. */
  text: z.string().optional(),
  /** The queued user messages whose text was the query. */
  message_ids: z.array(Id),
  budget_tokens: z.number().int().nonnegative(),
  hits: z.array(
    z.object({
      store: z.string(),
      target: z.string(),
      version_id: Id,
      tokens: z.number().int().nonnegative(),
      /** Cut to fit the budget's rest. */
      truncated: z.boolean(),
    }),
  ),
  /** Hits found but left out: the budget was spent. */
  dropped: z.number().int().nonnegative(),
});

/**
 * Older history compacted so the session's requests stay under its agent's `context_management`
 * threshold (docs/context-management.md). The events stay as they are; from this event on, requests
 * carry what it says in place of the events up to `replaces.to_seq`: with `summary`, that text (which
 * folds in any earlier summary) and then the history after `to_seq`; with `cleared_tool_results`, those
 * results as stubs saying what they were.
 */
export const SessionCompaction = z.object({
  type: z.literal("session.compaction"),
  strategy: z.enum(["clear_tool_results", "summary"]),
  /** The summary of the history up to `replaces.to_seq`; null when only tool results were cleared. */
  summary: z.string().nullable(),
  /** The events this compaction stands for, whole turns (a call is never apart from its result). */
  replaces: z.object({ from_seq: z.number().int().positive(), to_seq: z.number().int().positive() }),
  /** Tool results replaced by a stub, with what they were. */
  cleared_tool_results: z.array(
    z.object({ tool_use_id: Id, name: z.string(), chars: z.number().int().nonnegative() }),
  ),
  /** The next request's estimate before and after. */
  tokens_before: z.number().int().nonnegative(),
  tokens_after: z.number().int().nonnegative(),
  /** The model that wrote the summary; null when none did. */
  model: z.string().nullable(),
});

// ---- spans ------------------------------------------------------------------------------------

export const SpanModelRequestStart = z.object({
  type: z.literal("span.model_request_start"),
  model: z.string(),
});
export const SpanModelRequestEnd = z.object({
  type: z.literal("span.model_request_end"),
  model_request_start_id: Id,
  model_usage: TokenUsage,
  is_error: z.boolean(),
});

/** Every payload, discriminated on `type`. Adding a member makes exhaustive switches fail to compile. */
export const EventPayload = z.discriminatedUnion("type", [
  UserMessage,
  UserInterrupt,
  UserToolConfirmation,
  UserCustomToolResult,
  UserDefineOutcome,
  AgentMessage,
  AgentThinking,
  AgentToolUse,
  AgentToolResult,
  AgentUiMessage,
  AgentUiBlocks,
  AgentMcpToolUse,
  AgentMcpToolResult,
  AgentCustomToolUse,
  McpToolsListed,
  SessionStatusRunning,
  SessionStatusIdle,
  SessionStatusRescheduled,
  SessionStatusTerminated,
  SessionError,
  SessionUsage,
  SessionUpdated,
  SessionChildCreated,
  SessionChildCompleted,
  SessionChildRequiresAction,
  SessionWakeQueued,
  SandboxStatus,
  SessionMemoryRecalled,
  SessionCompaction,
  SpanModelRequestStart,
  SpanModelRequestEnd,
]);
export type EventPayload = z.infer<typeof EventPayload>;
export type EventType = EventPayload["type"];
export type PayloadOf<T extends EventType> = Extract<EventPayload, { type: T }>;

export const EventEnvelope = z.object({
  id: Id,
  session_id: Id,
  seq: z.number().int().positive(),
  processed_at: Timestamp.nullable(),
  created_at: Timestamp,
  wake_id: Id.nullable().optional(),
  trace_id: z
    .string()
    .regex(/^[0-9a-f]{32}$/)
    .nullable()
    .optional(),
});
export type EventEnvelope = z.infer<typeof EventEnvelope>;

/** A committed event as stored, streamed and returned by the API: envelope and payload, flat. */
export const SessionEvent = z.intersection(EventEnvelope, EventPayload);
export type SessionEvent = EventEnvelope & EventPayload;
export type EventOf<T extends EventType> = EventEnvelope & PayloadOf<T>;
