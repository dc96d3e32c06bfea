import type { WakeJobToPublish } from "@wakeloop/bus";
import { PostEventsResponse, type SessionEvent, type UserEventInput } from "@wakeloop/contracts";
import {
  append,
  appendAt,
  type Database,
  idleDescendants,
  isUniqueViolation,
  scheduleWake,
  withTenant,
} from "@wakeloop/db";
import { wakeReason } from "@wakeloop/session-core";
import type { Kysely, Transaction } from "kysely";
import { lockSession } from "../sessions/session-lock";
import { checkUserEvents } from "./check-user-events";
import { type IdempotencyClaim, recordedResponse, recordResponse } from "./idempotency";
import { type Descendant, routeChildAnswers } from "./route-child-answers";

export interface PostUserEventsInput {
  tenantId: string;
  sessionId: string;
  events: readonly UserEventInput[];
  idempotency: IdempotencyClaim | null;
  now: Date;
  /** The tenant's limit of wakes in flight (`WAKES_IN_FLIGHT_PER_TENANT`), as the orchestrator's. */
  maxWakesInFlight: number;
}

export interface PostUserEventsResult {
  events: SessionEvent[];
  /** True when this is the recorded answer to an earlier request with the same Idempotency-Key. */
  replayed: boolean;
  /** Wake jobs this commit marked published, for the caller to publish once it has committed. */
  wakeJobs: WakeJobToPublish[];
}

const ACCEPTED = 202;

/**
 * Appends a client's batch in one transaction, together with its idempotency record. The session row
 * is locked before the batch is checked against the projection, so two answers racing for the same
 * pending action cannot both pass. When the batch leaves the session needing a wake, the wake is opened
 * in the same commit (`wl_open_wake`, as the orchestrator opens it) and the jobs it lets its tenant
 * publish are returned: the worker gets the job without waiting for the orchestrator to see the event.
 * The orchestrator still sees it, finds the wake open and does nothing, so it stays the backstop.
 */
export async function postUserEvents(
  db: Kysely<Database>,
  input: PostUserEventsInput,
): Promise<PostUserEventsResult> {
  const { idempotency } = input;
  try {
    return await withTenant(db, input.tenantId, async (trx) => {
      if (idempotency !== null) {
        const recorded = await recordedResponse(trx, input.tenantId, idempotency, PostEventsResponse);
        if (recorded !== null) return { events: recorded.body.events, replayed: true, wakeJobs: [] };
      }
      const { state, agentId } = await lockSession(trx, input.tenantId, input.sessionId);
      // Confirmations the parent does not await may be its sub-sessions' approvals, answered from here.
      const routed = routeChildAnswers(state, await waitingDescendants(trx, input, state), input.events);
      checkUserEvents(state, routed.own);
      const { events, head } = await appendAt(trx, {
        tenantId: input.tenantId,
        sessionId: input.sessionId,
        events: routed.own,
        now: input.now,
        head: { lastSeq: state.last_seq, state },
      });
      for (const [sessionId, answers] of routed.children) {
        events.push(
          ...(await append(trx, { tenantId: input.tenantId, sessionId, events: answers, now: input.now })),
        );
      }
      if (idempotency !== null) {
        await recordResponse(trx, input.tenantId, idempotency, { statusCode: ACCEPTED, body: { events } });
      }
      const reason = wakeReason(head.state);
      const wakeJobs =
        reason === null
          ? []
          : (
              await scheduleWake(trx, {
                tenantId: input.tenantId,
                sessionId: input.sessionId,
                reason,
                maxInFlight: input.maxWakesInFlight,
              })
            ).claimed.map((job) =>
              job.session_id === input.sessionId ? { ...job, agent_id: agentId } : job,
            );
      return { events, replayed: false, wakeJobs };
    });
  } catch (error) {
    // A concurrent request with the same key committed first; our append rolled back with our record.
    if (idempotency !== null && isUniqueViolation(error, "idempotency_keys_pkey")) {
      const recorded = await recordedResponse(db, input.tenantId, idempotency, PostEventsResponse);
      if (recorded !== null) return { events: recorded.body.events, replayed: true, wakeJobs: [] };
    }
    throw error;
  }
}

/** The sub-sessions to route answers to, locked; read only when a confirmation is not the parent's. */
function waitingDescendants(
  trx: Transaction<Database>,
  input: PostUserEventsInput,
  state: { pending_actions: readonly { event_id: string }[] },
): Promise<Descendant[]> {
  const foreign = input.events.some(
    (event) =>
      event.type === "user.tool_confirmation" &&
      !state.pending_actions.some((action) => action.event_id === event.tool_use_id),
  );
  return foreign ? idleDescendants(trx, input, { lock: true }) : Promise.resolve([]);
}
