import { type Environment, EnvironmentSpec, type ListQuery, WakeloopError } from "@wakeloop/contracts";
import { type Database, type EnvironmentsTable, newId, readJson, withTenant } from "@wakeloop/db";
import type { Kysely, Selectable } from "kysely";
import type { z } from "zod";
import { notFound } from "../http/api-error";
import { parseInput } from "../http/parse-input";

/** Environments are not versioned: an update replaces the spec for sessions that start afterwards. */

export type EnvironmentSpecValue = z.output<typeof EnvironmentSpec>;

export interface EnvironmentRecord {
  environment: Environment;
  archived: boolean;
}

function toEnvironment(row: Selectable<EnvironmentsTable>): Environment {
  const spec = readJson(EnvironmentSpec, row.spec, "environment spec");
  return {
    ...spec,
    id: row.id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export async function insertEnvironment(
  db: Kysely<Database>,
  tenantId: string,
  spec: EnvironmentSpecValue,
  now: Date,
): Promise<Environment> {
  const row = await withTenant(db, tenantId, (trx) =>
    trx
      .insertInto("environments")
      .values({
        id: newId("environment"),
        tenant_id: tenantId,
        name: spec.name,
        spec: JSON.stringify(spec),
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow(),
  );
  return toEnvironment(row);
}

export async function findEnvironment(
  db: Kysely<Database>,
  tenantId: string,
  environmentId: string,
): Promise<EnvironmentRecord> {
  const row = await withTenant(db, tenantId, (trx) =>
    trx
      .selectFrom("environments")
      .selectAll()
      .where("tenant_id", "=", tenantId)
      .where("id", "=", environmentId)
      .executeTakeFirst(),
  );
  if (row === undefined) throw notFound("environment", environmentId);
  return { environment: toEnvironment(row), archived: row.archived_at !== null };
}

export async function listEnvironments(
  db: Kysely<Database>,
  tenantId: string,
  query: ListQuery,
): Promise<{ data: Environment[]; next_after_id: string | null }> {
  const rows = await withTenant(db, tenantId, (trx) => {
    let select = trx
      .selectFrom("environments")
      .selectAll()
      .where("tenant_id", "=", tenantId)
      .orderBy("id", "desc")
      .limit(query.limit + 1);
    if (query.after_id !== undefined) select = select.where("id", "<", query.after_id);
    if (!query.include_archived) select = select.where("archived_at", "is", null);
    return select.execute();
  });
  const page = rows.slice(0, query.limit);
  return {
    data: page.map(toEnvironment),
    next_after_id: rows.length > query.limit ? (page.at(-1)?.id ?? null) : null,
  };
}

/** The spec with `patch`'s top-level fields replaced; the row lock orders concurrent updates. */
export function updateEnvironment(
  db: Kysely<Database>,
  tenantId: string,
  environmentId: string,
  patch: Partial<EnvironmentSpecValue>,
  validate: (spec: EnvironmentSpecValue) => void,
  now: Date,
): Promise<Environment> {
  return withTenant(db, tenantId, async (trx) => {
    const row = await trx
      .selectFrom("environments")
      .selectAll()
      .where("tenant_id", "=", tenantId)
      .where("id", "=", environmentId)
      .forUpdate()
      .executeTakeFirst();
    if (row === undefined) throw notFound("environment", environmentId);
    if (row.archived_at !== null) {
      throw new WakeloopError(
        "environment_archived",
        `environment ${environmentId} is archived and cannot change`,
        {
          details: { id: environmentId },
        },
      );
    }
    const current = readJson(EnvironmentSpec, row.spec, "environment spec");
    const spec = parseInput(EnvironmentSpec, { ...current, ...patch }, "environment");
    validate(spec);
    const updated = await trx
      .updateTable("environments")
      .set({ name: spec.name, spec: JSON.stringify(spec), updated_at: now })
      .where("id", "=", environmentId)
      .returningAll()
      .executeTakeFirstOrThrow();
    return toEnvironment(updated);
  });
}

/** Archived environments start no new sessions. Archiving twice is a no-op. */
export async function archiveEnvironment(
  db: Kysely<Database>,
  tenantId: string,
  environmentId: string,
  now: Date,
): Promise<Environment> {
  return withTenant(db, tenantId, async (trx) => {
    await trx
      .updateTable("environments")
      .set({ archived_at: now, updated_at: now })
      .where("tenant_id", "=", tenantId)
      .where("id", "=", environmentId)
      .where("archived_at", "is", null)
      .execute();
    return (await findEnvironment(trx, tenantId, environmentId)).environment;
  });
}
