import { WakeloopError } from "@wakeloop/contracts";
import { type Database, readJson, withTenant } from "@wakeloop/db";
import { stableHash } from "@wakeloop/tool-runtime";
import type { Kysely } from "kysely";
import { z } from "zod";
import { parseInput } from "../http/parse-input";

/**
 * `Idempotency-Key`: the first request with a key records its response in the same transaction as its
 * effect; a repeat with the same request gets that response again, a repeat with a different request
 * (another body, or another session) a 409. Keys are per tenant.
 */

const IdempotencyKeyHeader = z.string().trim().min(1).max(255).optional();

export interface IdempotencyClaim {
  key: string;
  requestHash: string;
}

export interface RecordedResponse<T> {
  statusCode: number;
  body: T;
}

/** The claim for a request, or null when it carries no key. */
export function idempotencyClaim(
  header: unknown,
  request: { method: string; path: string; body: unknown },
): IdempotencyClaim | null {
  const key = parseInput(IdempotencyKeyHeader, header, "Idempotency-Key header");
  if (key === undefined) return null;
  // Key order does not matter: the same request sent with its fields reordered is the same request.
  return { key, requestHash: stableHash(request) };
}

/** The recorded response for the claim's key, or null when the key is new; 409 when it was used otherwise. */
export async function recordedResponse<S extends z.ZodType>(
  db: Kysely<Database>,
  tenantId: string,
  claim: IdempotencyClaim,
  schema: S,
): Promise<RecordedResponse<z.output<S>> | null> {
  const row = await withTenant(db, tenantId, (trx) =>
    trx
      .selectFrom("idempotency_keys")
      .select(["request_hash", "status_code", "response"])
      .where("tenant_id", "=", tenantId)
      .where("key", "=", claim.key)
      .executeTakeFirst(),
  );
  if (row === undefined) return null;
  if (row.request_hash !== claim.requestHash) {
    throw new WakeloopError(
      "idempotency_key_reused",
      "this Idempotency-Key was already used for a different request; use a new key for a new request",
      { details: { idempotency_key: claim.key } },
    );
  }
  return {
    statusCode: row.status_code,
    body: readJson(schema, row.response, "recorded idempotent response"),
  };
}

export async function recordResponse(
  db: Kysely<Database>,
  tenantId: string,
  claim: IdempotencyClaim,
  response: RecordedResponse<unknown>,
): Promise<void> {
  await withTenant(db, tenantId, (trx) =>
    trx
      .insertInto("idempotency_keys")
      .values({
        tenant_id: tenantId,
        key: claim.key,
        request_hash: claim.requestHash,
        status_code: response.statusCode,
        response: JSON.stringify(response.body),
      })
      .execute(),
  );
}
