import pg from "pg";

/*
 * Creating and dropping a whole database needs a connection to another one on the same server; we
 * use the `postgres` maintenance database, which every Postgres has.
 */

function databaseName(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  if (name === "") throw new RangeError(`database url ${redactUrl(url)} names no database`);
  return name;
}

async function withMaintenanceClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const maintenance = new URL(url);
  maintenance.pathname = "/postgres";
  const client = new pg.Client({ connectionString: maintenance.toString() });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/** The url with its password hidden, for logs and messages. */
export function redactUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password !== "") parsed.password = "***";
  return parsed.toString();
}

/** Creates the database `url` names unless it exists; true when it was created. */
export function ensureDatabase(url: string): Promise<boolean> {
  const name = databaseName(url);
  return withMaintenanceClient(url, async (client) => {
    const existing = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (existing.rowCount !== 0) return false;
    try {
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
      return true;
    } catch (error) {
      // Someone else created it between our check and our CREATE.
      if (error instanceof pg.DatabaseError && error.code === "42P04") return false;
      throw error;
    }
  });
}

/**
 * Creates the database `url` names as a copy of the database `template` (`CREATE DATABASE … TEMPLATE`,
 * a file copy: much faster than migrating anew). Nothing may stay connected to the template.
 * Database-level privileges live in the cluster's catalog, not in the copied files, so the copy starts
 * with the defaults: what the template's PUBLIC lost (migration 0016 revokes TEMPORARY) is revoked from
 * the copy's PUBLIC too.
 */
export function copyDatabase(template: string, url: string): Promise<void> {
  const name = databaseName(url);
  return withMaintenanceClient(url, async (client) => {
    const copy = client.escapeIdentifier(name);
    await client.query(`CREATE DATABASE ${copy} TEMPLATE ${client.escapeIdentifier(template)}`);
    const revoked = await client.query<{ privilege: string }>(
      `SELECT privilege FROM unnest(ARRAY['CONNECT', 'TEMPORARY']) AS privilege
       WHERE NOT EXISTS (
         SELECT 1 FROM pg_database d, aclexplode(coalesce(d.datacl, acldefault('d', d.datdba))) a
         WHERE d.datname = $1 AND a.grantee = 0 AND a.privilege_type = privilege)`,
      [template],
    );
    for (const { privilege } of revoked.rows)
      await client.query(`REVOKE ${privilege} ON DATABASE ${copy} FROM PUBLIC`);
  });
}

/** Drops the database `url` names, closing its open connections first. */
export function dropDatabase(url: string): Promise<void> {
  const name = databaseName(url);
  return withMaintenanceClient(url, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`);
  });
}

/**
 * Drops a login role (test fixtures make one per database), through the maintenance database since
 * the role's own database is usually gone by then. The role must own nothing and hold no grants.
 */
export function dropRole(url: string, role: string): Promise<void> {
  return withMaintenanceClient(url, async (client) => {
    await client.query(`DROP ROLE IF EXISTS ${client.escapeIdentifier(role)}`);
  });
}
