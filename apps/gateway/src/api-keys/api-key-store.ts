import type { ApiKey, ApiKeyRole, CreatedApiKey, ListQuery } from "@wakeloop/contracts";
import { WakeloopError } from "@wakeloop/contracts";
import { type ApiKeysTable, type Database, newId, withTenant } from "@wakeloop/db";
import { type Kysely, type Selectable, sql } from "kysely";
import { apiKeyDisplayPrefix, generateApiKey, hashApiKey } from "../auth/api-key-secret";
import type { Principal } from "../auth/principal";
import { notFound } from "../http/api-error";

function toApiKey(row: Selectable<ApiKeysTable>): ApiKey {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    key_prefix: row.key_prefix,
    created_at: row.created_at.toISOString(),
    revoked_at: row.revoked_at?.toISOString() ?? null,
  };
}

/** Mints a key; the secret is in the result only and never stored. Runs in the caller's transaction too. */
export async function insertApiKey(
  db: Kysely<Database>,
  input: { tenantId: string; role: ApiKeyRole; name: string },
): Promise<CreatedApiKey> {
  const key = generateApiKey();
  const row = await withTenant(db, input.tenantId, (trx) =>
    trx
      .insertInto("api_keys")
      .values({
        id: newId("apiKey"),
        tenant_id: input.tenantId,
        role: input.role,
        key_hash: hashApiKey(key),
        key_prefix: apiKeyDisplayPrefix(key),
        name: input.name,
      })
      .returningAll()
      .executeTakeFirstOrThrow(),
  );
  return { ...toApiKey(row), key };
}

/**
 * The tenant and role of a presented key; null when no live key matches. The tenant is not known
 * before this lookup, so it goes through the definer function that answers exactly this question.
 */
export async function findPrincipal(db: Kysely<Database>, key: string): Promise<Principal | null> {
  const result = await sql<Pick<ApiKeysTable, "id" | "tenant_id" | "role">>`
    SELECT * FROM wl_api_key_principal(${hashApiKey(key)})`.execute(db);
  const row = result.rows[0];
  return row === undefined ? null : { tenantId: row.tenant_id, keyId: row.id, role: row.role };
}

/** Whether the key is still live: long-lived responses (event streams) ask again as they go. */
export async function isKeyLive(db: Kysely<Database>, tenantId: string, keyId: string): Promise<boolean> {
  const row = await withTenant(db, tenantId, (trx) =>
    trx
      .selectFrom("api_keys")
      .select("id")
      .where("tenant_id", "=", tenantId)
      .where("id", "=", keyId)
      .where("revoked_at", "is", null)
      .executeTakeFirst(),
  );
  return row !== undefined;
}

export async function listApiKeys(
  db: Kysely<Database>,
  tenantId: string,
  query: ListQuery,
): Promise<{ data: ApiKey[]; next_after_id: string | null }> {
  const rows = await withTenant(db, tenantId, (trx) => {
    let select = trx
      .selectFrom("api_keys")
      .selectAll()
      .where("tenant_id", "=", tenantId)
      .orderBy("id", "desc")
      .limit(query.limit + 1);
    if (query.after_id !== undefined) select = select.where("id", "<", query.after_id);
    if (!query.include_archived) select = select.where("revoked_at", "is", null);
    return select.execute();
  });
  const page = rows.slice(0, query.limit);
  return {
    data: page.map(toApiKey),
    next_after_id: rows.length > query.limit ? (page.at(-1)?.id ?? null) : null,
  };
}

/**
 * Revokes a key at once (the next request with it is a 401). Revoking twice is a no-op; revoking the
 * tenant's last live owner key is refused, since nothing could mint a new one afterwards.
 */
export function revokeApiKey(
  db: Kysely<Database>,
  tenantId: string,
  keyId: string,
  now: Date,
): Promise<ApiKey> {
  return withTenant(db, tenantId, async (trx) => {
    // Locking every live owner key serializes concurrent revocations of the last two owners.
    const owners = await trx
      .selectFrom("api_keys")
      .select("id")
      .where("tenant_id", "=", tenantId)
      .where("role", "=", "owner")
      .where("revoked_at", "is", null)
      .forUpdate()
      .execute();
    const row = await trx
      .selectFrom("api_keys")
      .selectAll()
      .where("tenant_id", "=", tenantId)
      .where("id", "=", keyId)
      .executeTakeFirst();
    if (row === undefined) throw notFound("api key", keyId);
    if (row.revoked_at !== null) return toApiKey(row);
    if (row.role === "owner" && owners.length === 1) {
      throw new WakeloopError(
        "last_owner_key",
        "this is the tenant's last owner key; mint another owner key first",
        {
          details: { id: keyId },
        },
      );
    }
    const revoked = await trx
      .updateTable("api_keys")
      .set({ revoked_at: now })
      .where("id", "=", keyId)
      .returningAll()
      .executeTakeFirstOrThrow();
    return toApiKey(revoked);
  });
}
