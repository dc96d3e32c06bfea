import { type CredentialProvider, type ProviderCredential, WakeloopError } from "@wakeloop/contracts";
import { type Database, type ProviderCredentialsTable, withTenant } from "@wakeloop/db";
import { type Kysely, type Selectable, sql } from "kysely";
import type { CredentialCipher } from "./credential-cipher";

/** Binds a sealed value to its row: the tenant and provider are authenticated with it. */
const context = (tenantId: string, provider: CredentialProvider) =>
  `provider_credentials/${tenantId}/${provider}`;

function toCredential(
  row: Pick<Selectable<ProviderCredentialsTable>, "provider" | "created_at" | "updated_at">,
) {
  return {
    provider: row.provider,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  } satisfies ProviderCredential;
}

/** Stores (or replaces) a tenant's key for `provider`, sealed; answers with metadata only. */
export async function putProviderCredential(
  db: Kysely<Database>,
  cipher: CredentialCipher,
  input: { tenantId: string; provider: CredentialProvider; apiKey: string },
  now: Date,
): Promise<ProviderCredential> {
  const { keyId, sealed } = cipher.seal(input.apiKey, context(input.tenantId, input.provider));
  const row = await withTenant(db, input.tenantId, (trx) =>
    trx
      .insertInto("provider_credentials")
      .values({
        tenant_id: input.tenantId,
        provider: input.provider,
        key_id: keyId,
        sealed,
        created_at: now,
        updated_at: now,
      })
      .onConflict((conflict) =>
        conflict.columns(["tenant_id", "provider"]).doUpdateSet({ key_id: keyId, sealed, updated_at: now }),
      )
      .returning(["provider", "created_at", "updated_at"])
      .executeTakeFirstOrThrow(),
  );
  return toCredential(row);
}

export async function listProviderCredentials(
  db: Kysely<Database>,
  tenantId: string,
): Promise<ProviderCredential[]> {
  const rows = await withTenant(db, tenantId, (trx) =>
    trx
      .selectFrom("provider_credentials")
      .select(["provider", "created_at", "updated_at"])
      .where("tenant_id", "=", tenantId)
      .orderBy("provider")
      .execute(),
  );
  return rows.map(toCredential);
}

export async function deleteProviderCredential(
  db: Kysely<Database>,
  tenantId: string,
  provider: CredentialProvider,
): Promise<ProviderCredential> {
  const row = await withTenant(db, tenantId, (trx) =>
    trx
      .deleteFrom("provider_credentials")
      .where("tenant_id", "=", tenantId)
      .where("provider", "=", provider)
      .returning(["provider", "created_at", "updated_at"])
      .executeTakeFirst(),
  );
  if (row === undefined) {
    throw new WakeloopError(
      "provider_credential_not_found",
      `no credential stored for provider ${provider}`,
      {
        details: { provider },
      },
    );
  }
  return toCredential(row);
}

/** The tenant's key for `provider` in clear, for the one request that carries it; undefined when none. */
export async function readProviderCredential(
  db: Kysely<Database>,
  cipher: CredentialCipher,
  tenantId: string,
  provider: CredentialProvider,
): Promise<string | undefined> {
  // One round trip (`wl_provider_credential`): this read is on every wake's way to its first request.
  const { rows } = await sql<{
    key_id: string;
    sealed: Buffer;
  }>`SELECT * FROM wl_provider_credential(${tenantId}, ${provider})`.execute(db);
  const [row] = rows;
  if (row === undefined) return undefined;
  return cipher.open({ keyId: row.key_id, sealed: row.sealed }, context(tenantId, provider));
}
