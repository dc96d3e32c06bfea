import { PostEventsResponse, type SessionEvent, type UserEventInput } from "@wakeloop/contracts";
import { append, type Database, isUniqueViolation, withTenant } from "@wakeloop/db";
import type { Kysely } from "kysely";
import { lockSessionState } from "../sessions/session-lock";
import { checkUserEvents } from "./check-user-events";
import { type IdempotencyClaim, recordedResponse, recordResponse } from "./idempotency";

export interface PostUserEventsInput {
  tenantId: string;
  sessionId: string;
  events: readonly UserEventInput[];
  idempotency: IdempotencyClaim | null;
  now: Date;
}

export interface PostUserEventsResult {
  events: SessionEvent[];
  /** True when this is the recorded answer to an earlier request with the same Idempotency-Key. */
  replayed: boolean;
}

const ACCEPTED = 202;

/**
 * Appends a client's batch in one transaction, together with its idempotency record. The session row
 * is locked before the batch is checked against the projection, so two answers racing for the same
 * pending action cannot both pass.
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
        if (recorded !== null) return { events: recorded.body.events, replayed: true };
      }
      checkUserEvents(await lockSessionState(trx, input.tenantId, input.sessionId), input.events);

      const events = await append(trx, {
        tenantId: input.tenantId,
        sessionId: input.sessionId,
        events: input.events,
        now: input.now,
      });
      if (idempotency !== null) {
        await recordResponse(trx, input.tenantId, idempotency, { statusCode: ACCEPTED, body: { events } });
      }
      return { events, replayed: false };
    });
  } catch (error) {
    // A concurrent request with the same key committed first; our append rolled back with our record.
    if (idempotency !== null && isUniqueViolation(error, "idempotency_keys_pkey")) {
      const recorded = await recordedResponse(db, input.tenantId, idempotency, PostEventsResponse);
      if (recorded !== null) return { events: recorded.body.events, replayed: true };
    }
    throw error;
  }
}
