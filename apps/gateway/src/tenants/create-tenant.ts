import type { CreatedApiKey } from "@wakeloop/contracts";
import { type Database, newId, withTenant } from "@wakeloop/db";
import type { Kysely } from "kysely";
import { insertApiKey } from "../api-keys/api-key-store";

export interface CreatedTenant {
  tenant: { id: string; name: string; created_at: string };
  /** The tenant's first owner key; its secret exists only in this result. */
  ownerKey: CreatedApiKey;
}

/**
 * A tenant and its first owner key, together or not at all. An operator's command: it needs the
 * migration owner's connection, since services may not create tenants.
 */
export function createTenant(db: Kysely<Database>, input: { name: string }): Promise<CreatedTenant> {
  const id = newId("tenant");
  return withTenant(db, id, async (trx) => {
    const tenant = await trx
      .insertInto("tenants")
      .values({ id, name: input.name })
      .returningAll()
      .executeTakeFirstOrThrow();
    const ownerKey = await insertApiKey(trx, { tenantId: tenant.id, role: "owner", name: "first owner key" });
    return {
      tenant: { id: tenant.id, name: tenant.name, created_at: tenant.created_at.toISOString() },
      ownerKey,
    };
  });
}
