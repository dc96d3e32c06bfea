import type { Database } from "@wakeloop/db";
import { type Kysely, sql } from "kysely";

/**
 * Makes a new latest version of the agent whose model points at `baseUrl`, written straight to the
 * database: a version saved before today's rules, or a name whose DNS changed since. The API would
 * refuse to save it, so only the request-time check stands between it and the network.
 */
export async function storeVersionWithBaseUrl(db: Kysely<Database>, agentId: string, baseUrl: string) {
  await db.transaction().execute(async (trx) => {
    await sql`INSERT INTO agent_versions (agent_id, version, tenant_id, spec, created_at)
              SELECT agent_id, version + 1, tenant_id,
                     jsonb_set(spec, '{model,base_url}', to_jsonb(${baseUrl}::text)), now()
              FROM agent_versions
              WHERE agent_id = ${agentId}
              ORDER BY version DESC LIMIT 1`.execute(trx);
    await sql`UPDATE agents SET latest_version = latest_version + 1 WHERE id = ${agentId}`.execute(trx);
  });
}
