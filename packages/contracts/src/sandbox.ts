import { z } from "zod";
import { EnvironmentConfig } from "./api";
import { Content } from "./content";
import { SandboxStatusValue } from "./events";
import { Id, Timestamp } from "./ids";
import { SandboxToolName } from "./sandbox-tools";

export * from "./sandbox-mcp";
export * from "./sandbox-tools";

// RPC messages of the `sandbox` NATS service (actions ensure, execute, release, describe).

/** How the runner got the session's container for this `ensure`. */
export const SandboxProvisioning = z.enum(["existing", "restarted", "warm", "cold", "adopted"]);
export type SandboxProvisioning = z.infer<typeof SandboxProvisioning>;

export const SandboxEnsureRequest = z.object({
  tenant_id: Id,
  session_id: Id,
  /** Mounts the agent's shared substrate read-only at /workspace/agent when given. */
  agent_id: Id.optional(),
  environment: EnvironmentConfig,
});
export type SandboxEnsureRequest = z.infer<typeof SandboxEnsureRequest>;

export const SandboxEnsureResponse = z.object({
  session_id: Id,
  /** Route every later call for this session to this runner: it holds the container. */
  runner_id: z.string().min(1),
  status: SandboxStatusValue,
  /** Statuses the sandbox went through during this call, oldest first, for `sandbox.status` events. */
  transitions: z.array(SandboxStatusValue),
  provisioning: SandboxProvisioning,
  container_id: z.string(),
});
export type SandboxEnsureResponse = z.infer<typeof SandboxEnsureResponse>;

export const SandboxExecuteRequest = z.object({
  tenant_id: Id,
  session_id: Id,
  /** Idempotency key: a call id already executed returns its recorded result. */
  tool_call_id: Id,
  tool: SandboxToolName,
  input: z.unknown(),
  /** The wake that made the call: the author of what it writes to the agent's substrate. */
  wake_id: Id.optional(),
  /** Set by the harness once a `user.tool_confirmation{result:"allow"}` for this call is committed. */
  approved: z.boolean().default(false),
});
export type SandboxExecuteRequest = z.input<typeof SandboxExecuteRequest>;

export const SandboxExecuteCompleted = z.object({
  outcome: z.literal("completed"),
  tool_call_id: Id,
  is_error: z.boolean(),
  content: Content,
  /** Structured result for the tool's outputSchema and for telemetry (exit code, truncation, …). */
  result: z.record(z.string(), z.unknown()),
  /** True when this is the recorded result of an earlier execution of the same call id. */
  replayed: z.boolean(),
});
export type SandboxExecuteCompleted = z.infer<typeof SandboxExecuteCompleted>;

/** The command policy wants a human: the harness pauses the session with `requires_action`. */
export const SandboxExecuteNeedsApproval = z.object({
  outcome: z.literal("needs_approval"),
  tool_call_id: Id,
  command: z.string(),
  reason: z.string(),
});
export type SandboxExecuteNeedsApproval = z.infer<typeof SandboxExecuteNeedsApproval>;

export const SandboxExecuteResponse = z.discriminatedUnion("outcome", [
  SandboxExecuteCompleted,
  SandboxExecuteNeedsApproval,
]);
export type SandboxExecuteResponse = z.infer<typeof SandboxExecuteResponse>;

/** Interrupt of a running call: the runner kills the call's process group (of the owning tenant only). */
export const SandboxCancelRequest = z.object({ tenant_id: Id, session_id: Id, tool_call_id: Id });
export type SandboxCancelRequest = z.infer<typeof SandboxCancelRequest>;

export const SandboxCancelResponse = z.object({ cancelled: z.boolean() });
export type SandboxCancelResponse = z.infer<typeof SandboxCancelResponse>;

/** Removes the session's container, workspace volume and records (the session terminated). */
export const SandboxReleaseRequest = z.object({ tenant_id: Id.optional(), session_id: Id });
export type SandboxReleaseRequest = z.infer<typeof SandboxReleaseRequest>;

export const SandboxReleaseResponse = z.object({ released: z.boolean() });
export type SandboxReleaseResponse = z.infer<typeof SandboxReleaseResponse>;

export const SandboxDescribeRequest = z.object({ session_id: Id });
export type SandboxDescribeRequest = z.infer<typeof SandboxDescribeRequest>;

export const SandboxDescribeResponse = z.object({
  session_id: Id,
  runner_id: z.string(),
  status: z.union([SandboxStatusValue, z.literal("absent")]),
  container_id: z.string().nullable(),
  environment: EnvironmentConfig.nullable(),
});
export type SandboxDescribeResponse = z.infer<typeof SandboxDescribeResponse>;

/** Core-NATS notice on `<p>.sandbox.substrate`: the agent's substrate has a new latest version. */
export const SubstrateChangedNotice = z.object({ tenant_id: Id, agent_id: Id });
export type SubstrateChangedNotice = z.infer<typeof SubstrateChangedNotice>;

/** Core-NATS notice on `<p>.sandbox.status.<session>` whenever a sandbox changes status. */
export const SandboxStatusNotice = z.object({
  tenant_id: Id,
  session_id: Id,
  runner_id: z.string(),
  status: SandboxStatusValue,
  at: Timestamp,
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});
export type SandboxStatusNotice = z.infer<typeof SandboxStatusNotice>;
