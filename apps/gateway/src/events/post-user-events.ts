import type { WakeJobToPublish } from "@wakeloop/bus";
import {
  PostEventsResponse,
  type SessionEvent,
  type UserEventInput,
  WakeloopError,
} from "@wakeloop/contracts";
import {
  type Appended,
  append,
  appendAt,
  claimWakesToPublish,
  type Database,
  getSession,
  idleDescendants,
  isUniqueViolation,
  type ScheduledWake,
  withTenant,
} from "@wakeloop/db";
import { wakeReason } from "@wakeloop/session-core";
import type { Kysely } from "kysely";
import { notFound } from "../http/api-error";
import { lockSession } from "../sessions/session-lock";
import { checkUserEvents } from "./check-user-events";
import { type IdempotencyClaim, recordedResponse, recordResponse } from "./idempotency";
import { routeChildAnswers } from "./route-child-answers";

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
 * Appends a client's batch, checked against the session's projection so that two answers racing for
 * the same pending action cannot both pass. When the batch leaves the session needing a wake, the wake
 * is opened in the append's own statement (`openWake`, as the orchestrator opens it) and the jobs it
 * lets its tenant publish are returned: the worker gets the job without waiting for the orchestrator
 * to see the event. The orchestrator still sees it, finds the wake open and does nothing; it stays the
 * backstop, and opens the wakes of the answers routed to sub-sessions.
 */
export async function postUserEvents(
  db: Kysely<Database>,
  input: PostUserEventsInput,
): Promise<PostUserEventsResult> {
  // An Idempotency-Key's record commits with the events, so only a request without one can skip the
  // transaction.
  const appended = input.idempotency === null ? await appendAtReadHead(db, input) : null;
  const posted =
    appended === null
      ? await lockedPost(db, input)
      : {
          events: appended.events,
          replayed: false,
          ...jobsOf(appended.wake, input, appended.agentId),
        };
  const { held, ...result } = posted;
  if (!held) return result;
  // The wake waits for room, and is committed now: claim again, as a wake that ended meanwhile may
  // have missed it (`ScheduledWake.held`).
  const again = await claimWakesToPublish(db, {
    tenantId: input.tenantId,
    maxInFlight: input.maxWakesInFlight,
  });
  return { ...result, wakeJobs: [...result.wakeJobs, ...again] };
}

// Reads of a session that other writers keep moving before the locked path takes over.
const UNLOCKED_ATTEMPTS = 3;

/**
 * The batch appended without a transaction, in two round trips: the session read, and the append with
 * its wake at the head the batch was checked against, refused if another writer moved it meanwhile
 * (then read and checked again). Null when a confirmation may answer a sub-session (routing it takes
 * the locks) or the session stays contended: the locked path takes over.
 */
async function appendAtReadHead(
  db: Kysely<Database>,
  input: PostUserEventsInput,
): Promise<(Appended & { agentId: string }) | null> {
  for (let attempt = 1; attempt <= UNLOCKED_ATTEMPTS; attempt++) {
    const session = await getSession(db, input.tenantId, input.sessionId);
    if (session === null) throw notFound("session", input.sessionId);
    const { state } = session;
    if (answersOthers(state, input.events)) return null;
    checkUserEvents(state, input.events);
    try {
      const appended = await appendAt(db, {
        tenantId: input.tenantId,
        sessionId: input.sessionId,
        events: input.events,
        now: input.now,
        head: { lastSeq: state.last_seq, state },
        onMovedHead: "refuse",
        openWake: wakeFor(input),
      });
      return { ...appended, agentId: session.agent_id };
    } catch (error) {
      if (!(error instanceof WakeloopError && error.code === "session_head_moved")) throw error;
    }
  }
  return null;
}

/**
 * The batch appended in one transaction that first locks the session row, together with its
 * idempotency record, its answers routed to sub-sessions and its wake.
 */
async function lockedPost(
  db: Kysely<Database>,
  input: PostUserEventsInput,
): Promise<PostUserEventsResult & Opened> {
  const { idempotency } = input;
  try {
    return await withTenant(db, input.tenantId, async (trx) => {
      if (idempotency !== null) {
        const recorded = await recordedResponse(trx, input.tenantId, idempotency, PostEventsResponse);
        if (recorded !== null) return { events: recorded.body.events, replayed: true, ...NOT_OPENED };
      }
      const { state, agentId } = await lockSession(trx, input.tenantId, input.sessionId);
      // Confirmations the parent does not await may be its sub-sessions' approvals, answered from here.
      const descendants = answersOthers(state, input.events)
        ? await idleDescendants(trx, input, { lock: true })
        : [];
      const routed = routeChildAnswers(state, descendants, input.events);
      checkUserEvents(state, routed.own);
      const { events, wake } = await appendAt(trx, {
        tenantId: input.tenantId,
        sessionId: input.sessionId,
        events: routed.own,
        now: input.now,
        head: { lastSeq: state.last_seq, state },
        openWake: wakeFor(input),
      });
      for (const [sessionId, answers] of routed.children) {
        events.push(
          ...(await append(trx, { tenantId: input.tenantId, sessionId, events: answers, now: input.now })),
        );
      }
      if (idempotency !== null) {
        await recordResponse(trx, input.tenantId, idempotency, { statusCode: ACCEPTED, body: { events } });
      }
      return { events, replayed: false, ...jobsOf(wake, input, agentId) };
    });
  } catch (error) {
    // A concurrent request with the same key committed first; our append rolled back with our record.
    if (idempotency !== null && isUniqueViolation(error, "idempotency_keys_pkey")) {
      const recorded = await recordedResponse(db, input.tenantId, idempotency, PostEventsResponse);
      if (recorded !== null) return { events: recorded.body.events, replayed: true, ...NOT_OPENED };
    }
    throw error;
  }
}

/** The jobs to publish of the wake a batch opened, and whether that wake is held (`ScheduledWake`). */
interface Opened {
  wakeJobs: WakeJobToPublish[];
  held: boolean;
}

const NOT_OPENED: Opened = { wakeJobs: [], held: false };

/** The wake the batch leaves the session needing, if any, opened with the append. */
function wakeFor(input: PostUserEventsInput) {
  return { reasonFor: wakeReason, maxInFlight: input.maxWakesInFlight };
}

/** The jobs of the wake the append opened, this session's carrying its agent for the worker. */
function jobsOf({ claimed, held }: ScheduledWake, input: PostUserEventsInput, agentId: string): Opened {
  const wakeJobs = claimed.map((job) =>
    job.session_id === input.sessionId ? { ...job, agent_id: agentId } : job,
  );
  return { wakeJobs, held };
}

/** Whether a confirmation in the batch answers no action of this session: a sub-session's, maybe. */
function answersOthers(
  state: { pending_actions: readonly { event_id: string }[] },
  events: readonly UserEventInput[],
): boolean {
  return events.some(
    (event) =>
      event.type === "user.tool_confirmation" &&
      !state.pending_actions.some((action) => action.event_id === event.tool_use_id),
  );
}
