import { type VaultSecret, WakeloopError } from "@wakeloop/contracts";
import { type Database, type VaultSecretsTable, withTenant } from "@wakeloop/db";
import type { Kysely, Selectable } from "kysely";
import type { CredentialCipher } from "./credential-cipher";

/**
 * The tenant's vault (issue #12): named secrets for MCP servers' headers, sealed like provider keys.
 * The API writes and lists them (names and dates only); only the worker opens them, for the connection
 * that needs them, and the value goes nowhere else.
 */

/** Binds a sealed value to its row: a value copied under another tenant or name does not open. */
const context = (tenantId: string, name: string) => `vault_secrets/${tenantId}/${name}`;

function toSecret(row: Pick<Selectable<VaultSecretsTable>, "name" | "created_at" | "updated_at">) {
  return {
    name: row.name,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  } satisfies VaultSecret;
}

/** Stores (or replaces) a secret, sealed; answers with metadata only. */
export async function putVaultSecret(
  db: Kysely<Database>,
  cipher: CredentialCipher,
  input: { tenantId: string; name: string; value: string },
  now: Date,
): Promise<VaultSecret> {
  const { keyId, sealed } = cipher.seal(input.value, context(input.tenantId, input.name));
  const row = await withTenant(db, input.tenantId, (trx) =>
    trx
      .insertInto("vault_secrets")
      .values({
        tenant_id: input.tenantId,
        name: input.name,
        key_id: keyId,
        sealed,
        created_at: now,
        updated_at: now,
      })
      .onConflict((conflict) =>
        conflict.columns(["tenant_id", "name"]).doUpdateSet({ key_id: keyId, sealed, updated_at: now }),
      )
      .returning(["name", "created_at", "updated_at"])
      .executeTakeFirstOrThrow(),
  );
  return toSecret(row);
}

export async function listVaultSecrets(db: Kysely<Database>, tenantId: string): Promise<VaultSecret[]> {
  const rows = await withTenant(db, tenantId, (trx) =>
    trx
      .selectFrom("vault_secrets")
      .select(["name", "created_at", "updated_at"])
      .where("tenant_id", "=", tenantId)
      .orderBy("name")
      .execute(),
  );
  return rows.map(toSecret);
}

export async function deleteVaultSecret(
  db: Kysely<Database>,
  tenantId: string,
  name: string,
): Promise<VaultSecret> {
  const row = await withTenant(db, tenantId, (trx) =>
    trx
      .deleteFrom("vault_secrets")
      .where("tenant_id", "=", tenantId)
      .where("name", "=", name)
      .returning(["name", "created_at", "updated_at"])
      .executeTakeFirst(),
  );
  if (row === undefined) {
    throw new WakeloopError("vault_secret_not_found", `the vault holds no secret named ${name}`, {
      details: { name },
    });
  }
  return toSecret(row);
}

/**
 * The named secrets in clear, for one MCP connection; a name the vault does not hold is an error that
 * names it (a spec may reference a secret the tenant has not stored yet, or has deleted).
 */
export async function openVaultSecrets(
  db: Kysely<Database>,
  cipher: CredentialCipher,
  tenantId: string,
  names: readonly string[],
): Promise<Map<string, string>> {
  if (names.length === 0) return new Map();
  const rows = await withTenant(db, tenantId, (trx) =>
    trx
      .selectFrom("vault_secrets")
      .select(["name", "key_id", "sealed"])
      .where("tenant_id", "=", tenantId)
      .where("name", "in", [...names])
      .execute(),
  );
  const missing = names.filter((name) => !rows.some((row) => row.name === name));
  if (missing.length > 0) {
    throw new WakeloopError(
      "vault_secret_not_found",
      `the vault holds no secret named ${missing.join(", ")}; store it with PUT /v1/vault/secrets/{name}`,
      { details: { names: missing } },
    );
  }
  return new Map(
    rows.map((row) => [
      row.name,
      cipher.open({ keyId: row.key_id, sealed: row.sealed }, context(tenantId, row.name)),
    ]),
  );
}
