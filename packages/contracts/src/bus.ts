import { z } from "zod";
import { WakeReason } from "./events";
import { Id } from "./ids";

/** A wake job: one bounded run of a session. The msg id is the wake id. */
export const WakeJob = z.object({
  wake_id: Id,
  tenant_id: Id,
  session_id: Id,
  attempt: z.number().int().positive(),
  reason: WakeReason,
  /**
   * The session's agent, when the publisher knew it: the worker asks for the agent's memory context
   * while it takes the lease instead of after. A hint only; the leased session's agent is the truth.
   */
  agent_id: Id.optional(),
});
export type WakeJob = z.infer<typeof WakeJob>;

/** Core-NATS control message to the worker holding a session's lease. */
export const ControlMessage = z.discriminatedUnion("type", [
  z.object({ type: z.literal("interrupt"), session_id: Id, event_id: Id }),
]);
export type ControlMessage = z.infer<typeof ControlMessage>;
