import {
  SessionModel,
  SessionRunChildInput,
  type ToolDefinition,
  WaitForSessionsInput,
} from "@wakeloop/contracts";
import { z } from "zod";
import { SPAWN_NAMES } from "../tool-names";
import { type ManagedToolSpec, managedTool } from "./define";

// Sub-sessions (personal-agent "Sub-Sessions"; openboa `session_delegate`, OpenClaw `sessions_spawn` as
// aliases of `spawn_session`, offered by naming profile). A child is a real session; the orchestrator tells the parent when it
// finishes (`session.child_completed`) and answers the parent's `wait_for_sessions`.

const SessionId = z.string().min(1).max(128);

export const SpawnSessionInput = z.object({
  task: z
    .string()
    .min(1)
    .max(100_000)
    .describe("The instruction for the sub-session: what it sees as its first user message"),
  agent_id: SessionId.optional().describe(
    "Another agent of this tenant to run the sub-session; default: this session's agent",
  ),
  token_limit: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("Max tokens the sub-session may use; at most what this session has left. Default: all of it"),
  title: z.string().max(500).optional().describe("A short title for the sub-session"),
  model: SessionModel.optional().describe(
    "Model for the sub-session, one its agent's provider serves (e.g. a cheaper/faster one for a simple task). Default: its agent's model",
  ),
});
export type SpawnSessionInput = z.infer<typeof SpawnSessionInput>;

export const ReportResultInput = z.object({
  result: z.string().max(100_000).describe("The result to send back to the parent session"),
});
export type ReportResultInput = z.infer<typeof ReportResultInput>;

export const SessionsSendInput = z.object({
  session_id: SessionId.describe("A sub-session of this session that has not finished"),
  message: z.string().min(1).max(100_000).describe("The message: it arrives as a user message and wakes it"),
});
export type SessionsSendInput = z.infer<typeof SessionsSendInput>;

export const SubagentsInput = z.object({
  action: z
    .enum(["list", "steer", "kill"])
    .default("list")
    .describe("list this session's sub-sessions, steer one with a message, or kill (archive) one"),
  session_id: SessionId.optional().describe("For steer and kill: the sub-session"),
  message: z.string().min(1).max(100_000).optional().describe("For steer: the message to send"),
});
export type SubagentsInput = z.infer<typeof SubagentsInput>;

const SPAWN_DESCRIPTION =
  "Create and start a sub-session that works on `task` independently, with its own history and a token " +
  "budget carved from this session's. Returns { id } at once; use wait_for_sessions to get its result.";

const spawn = (name: string, description: string): ToolDefinition =>
  managedTool({
    name,
    description,
    input: SpawnSessionInput,
    permissionPolicy: "always_allow",
    effects: ["spawn"],
    destructive: false,
    idempotent: false,
    interruptBehavior: "block",
    group: "sessions",
    // Spawns of one session run one at a time, so the children limit never races a sibling call.
    parallelism: { parallelSafe: false, resourceKey: "sub_sessions" },
    executor: "inline",
  });

/** What `sessions_send` and `subagents` share: they write to a sub-session, one at a time with spawns. */
const CHILD_ACTION = {
  permissionPolicy: "always_allow",
  effects: ["state"],
  idempotent: false,
  interruptBehavior: "block",
  group: "sessions",
  parallelism: { parallelSafe: false, resourceKey: "sub_sessions" },
  executor: "inline",
} satisfies Omit<ManagedToolSpec, "name" | "description" | "input" | "destructive">;

/**
 * The names other systems give `spawn_session`, with the same input and one implementation; the naming
 * profile (`tool_names`) decides which one a model is offered.
 */
export const SPAWN_ALIASES: readonly string[] = Object.values(SPAWN_NAMES).filter(
  (name) => name !== "spawn_session",
);

export const subSessionTools: ToolDefinition[] = [
  spawn("spawn_session", SPAWN_DESCRIPTION),
  ...SPAWN_ALIASES.map((alias) => spawn(alias, `Alias of spawn_session. ${SPAWN_DESCRIPTION}`)),
  managedTool({
    name: "wait_for_sessions",
    description:
      "Pause this session until the given sub-sessions finish (report a result, end, or run out of budget " +
      "or retries). Returns { results: [{ id, status, result }] }.",
    input: WaitForSessionsInput,
    permissionPolicy: "always_allow",
    effects: ["read"],
    destructive: false,
    idempotent: true,
    interruptBehavior: "cancel",
    group: "sessions",
    parallelism: { parallelSafe: true },
    pauses: "wait_for_sessions",
    // The session pauses on it (`requires_action`) and the orchestrator answers it when the children finish.
    executor: "client",
  }),
  managedTool({
    name: "session_run_child",
    description:
      "Advance one of your sub-sessions for a few bounded model requests (max_cycles) and wait for it, " +
      "without its history entering yours: `message` first goes to it as a user message (without one, " +
      "an idle sub-session is told to continue). This session pauses until the sub-session's turn ends, " +
      "it waits on a person, finishes, or uses its cycles. Returns its summary: { session_id, " +
      "relation_to_current, status (idle | requires_action | out_of_cycles | completed | error | " +
      "archived | budget_reached | retries_exhausted), cycles_used, max_cycles, result, requires_action, " +
      "outcome_status, promotion_ready, ... }.",
    input: SessionRunChildInput,
    permissionPolicy: "always_allow",
    effects: ["state"],
    destructive: false,
    idempotent: false,
    interruptBehavior: "cancel",
    group: "sessions",
    parallelism: { parallelSafe: false, resourceKey: "sub_sessions" },
    pauses: "run_child",
    // The session pauses on it (`requires_action`); the orchestrator starts the run and answers it.
    executor: "client",
  }),
  managedTool({
    name: "sessions_send",
    description:
      "Send a message to one of your sub-sessions that has not finished (it is idle after a turn, waiting " +
      "or still running): it arrives as a user message and wakes it. Returns { session_id, event_id }.",
    input: SessionsSendInput,
    ...CHILD_ACTION,
    destructive: false,
  }),
  managedTool({
    name: "subagents",
    description:
      "Your sub-sessions (OpenClaw subagents): action list (the default) shows them as session_list_children " +
      "does; steer sends one a message as sessions_send does; kill archives one that has not finished, and " +
      "its parent hears it ended as archived.",
    input: SubagentsInput,
    ...CHILD_ACTION,
    destructive: true,
  }),
  managedTool({
    name: "report_result",
    description:
      "Only in sub-sessions: send your result to the parent session and end this session. Nothing runs " +
      "after it. Returns { reported: true }.",
    input: ReportResultInput,
    permissionPolicy: "always_allow",
    effects: ["state"],
    destructive: false,
    idempotent: true,
    interruptBehavior: "block",
    group: "sessions",
    parallelism: { parallelSafe: false, resourceKey: "sub_session_result" },
    availability: ["session.is_child"],
    executor: "inline",
  }),
];
