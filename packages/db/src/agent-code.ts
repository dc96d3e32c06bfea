import { type AgentCodeKind, JsonSchemaObject, WakeloopError } from "@wakeloop/contracts";
import type { Kysely, Transaction } from "kysely";
import { z } from "zod";
import type { AgentScope } from "./agent-state";
import type { Database } from "./database";
import { newId } from "./ids";
import { readJson } from "./json-readers";
import { withTenant } from "./tenant-scope";

/*
 * Agent-defined tools, libraries and UI components (migration 0020): one store for the three kinds,
 * since they differ only in which fields a save carries. Every save is an immutable version; each
 * function joins the caller's transaction, so a management tool's write commits with its call and
 * result, and a refused write (a taken name, a missing item, the count limit) changes nothing.
 */

/** What one save stores; `schema` is a tool's parameter schema or a component's props schema. */
export interface AgentCodeContent {
  description: string;
  code: string;
  schema: JsonSchemaObject | null;
  /** The library names the code requires (read from its syntax tree at save time). */
  requires: string[];
}

/** Who saved a version: the session and the tool call, for the history. */
export interface AgentCodeAuthor {
  sessionId: string;
  toolCallId: string;
}

export interface AgentCodeItem extends AgentCodeContent {
  kind: AgentCodeKind;
  name: string;
  version: number;
  enabled: boolean;
}

const Requires = z.array(z.string());
const StoredSchema = JsonSchemaObject.nullable();

type Trx = Transaction<Database>;

function liveHead(trx: Trx, scope: AgentScope, kind: AgentCodeKind) {
  return trx
    .selectFrom("agent_code")
    .where("agent_code.tenant_id", "=", scope.tenantId)
    .where("agent_code.agent_id", "=", scope.agentId)
    .where("agent_code.kind", "=", kind)
    .where("agent_code.deleted_at", "is", null);
}

function withContent(trx: Trx, scope: AgentScope, kind: AgentCodeKind) {
  return liveHead(trx, scope, kind)
    .innerJoin("agent_code_versions as v", (join) =>
      join
        .onRef("v.tenant_id", "=", "agent_code.tenant_id")
        .onRef("v.code_id", "=", "agent_code.id")
        .onRef("v.version", "=", "agent_code.version"),
    )
    .select([
      "agent_code.name",
      "agent_code.version",
      "agent_code.enabled",
      "v.description",
      "v.code",
      "v.schema",
      "v.requires",
    ]);
}

function toItem(
  kind: AgentCodeKind,
  row: {
    name: string;
    version: number;
    enabled: boolean;
    description: string;
    code: string;
    schema: unknown;
    requires: unknown;
  },
): AgentCodeItem {
  return {
    kind,
    name: row.name,
    version: row.version,
    enabled: row.enabled,
    description: row.description,
    code: row.code,
    schema: readJson(StoredSchema, row.schema, `${kind} schema`),
    requires: readJson(Requires, row.requires, `${kind} requires`),
  };
}

async function insertVersion(
  trx: Trx,
  tenantId: string,
  codeId: string,
  version: number,
  content: AgentCodeContent,
  author: AgentCodeAuthor,
): Promise<void> {
  await trx
    .insertInto("agent_code_versions")
    .values({
      tenant_id: tenantId,
      code_id: codeId,
      version,
      description: content.description,
      code: content.code,
      schema: content.schema === null ? null : JSON.stringify(content.schema),
      requires: JSON.stringify(content.requires),
      session_id: author.sessionId,
      tool_call_id: author.toolCallId,
    })
    .execute();
}

/**
 * Version 1 of a new item. A live item of that name (`agent_code_exists`) or `maxItems` live items of
 * the kind (`agent_code_limit`) refuse it.
 */
export function createAgentCode(
  db: Kysely<Database>,
  scope: AgentScope,
  kind: AgentCodeKind,
  name: string,
  content: AgentCodeContent,
  author: AgentCodeAuthor,
  limits: { maxItems: number },
): Promise<{ name: string; version: number }> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const { count } = await liveHead(trx, scope, kind)
      .select((eb) => eb.fn.countAll<string>().as("count"))
      .executeTakeFirstOrThrow();
    if (Number(count) >= limits.maxItems) {
      throw new WakeloopError(
        "agent_code_limit",
        `this agent already has ${count} ${plural(kind)}, the most it may keep; delete one first`,
      );
    }
    const id = newId("agentCode");
    // ON CONFLICT rather than a caught unique violation: an error would abort the caller's transaction.
    const inserted = await trx
      .insertInto("agent_code")
      .values({ id, tenant_id: scope.tenantId, agent_id: scope.agentId, kind, name, version: 1 })
      .onConflict((conflict) =>
        conflict
          .columns(["tenant_id", "agent_id", "kind", "name"])
          .where("deleted_at", "is", null)
          .doNothing(),
      )
      .returning("id")
      .executeTakeFirst();
    if (inserted === undefined) {
      throw new WakeloopError(
        "agent_code_exists",
        `a ${label(kind)} named "${name}" already exists; change it with update_${kind}`,
      );
    }
    await insertVersion(trx, scope.tenantId, id, 1, content, author);
    return { name, version: 1 };
  });
}

/** A new version from the current one with `change` applied; null when no live item has the name. */
export function updateAgentCode(
  db: Kysely<Database>,
  scope: AgentScope,
  kind: AgentCodeKind,
  name: string,
  change: (current: AgentCodeItem) => AgentCodeContent,
  author: AgentCodeAuthor,
): Promise<{ name: string; version: number } | null> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const head = await liveHead(trx, scope, kind)
      .where("agent_code.name", "=", name)
      .select(["agent_code.id", "agent_code.version"])
      .forUpdate()
      .executeTakeFirst();
    if (head === undefined) return null;
    const row = await withContent(trx, scope, kind)
      .where("agent_code.id", "=", head.id)
      .executeTakeFirstOrThrow();
    const version = head.version + 1;
    await insertVersion(trx, scope.tenantId, head.id, version, change(toItem(kind, row)), author);
    await trx
      .updateTable("agent_code")
      .set({ version, updated_at: new Date() })
      .where("tenant_id", "=", scope.tenantId)
      .where("id", "=", head.id)
      .execute();
    return { name, version };
  });
}

/** Frees the name; the versions stay as history. False when no live item has the name. */
export function deleteAgentCode(
  db: Kysely<Database>,
  scope: AgentScope,
  kind: AgentCodeKind,
  name: string,
): Promise<boolean> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const result = await trx
      .updateTable("agent_code")
      .set({ deleted_at: new Date(), updated_at: new Date() })
      .where("tenant_id", "=", scope.tenantId)
      .where("agent_id", "=", scope.agentId)
      .where("kind", "=", kind)
      .where("name", "=", name)
      .where("deleted_at", "is", null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  });
}

/** Offers a tool again or takes it out of the offered set; null when no live tool has the name. */
export function setAgentToolEnabled(
  db: Kysely<Database>,
  scope: AgentScope,
  name: string,
  enabled: boolean,
): Promise<{ name: string; enabled: boolean } | null> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const row = await trx
      .updateTable("agent_code")
      .set({ enabled, updated_at: new Date() })
      .where("tenant_id", "=", scope.tenantId)
      .where("agent_id", "=", scope.agentId)
      .where("kind", "=", "tool")
      .where("name", "=", name)
      .where("deleted_at", "is", null)
      .returning("enabled")
      .executeTakeFirst();
    return row === undefined ? null : { name, enabled: row.enabled };
  });
}

/** The live items of a kind by name, with their current version (disabled ones only when asked). */
export function listAgentCode(
  db: Kysely<Database>,
  scope: AgentScope,
  kind: AgentCodeKind,
  options: { includeDisabled: boolean },
): Promise<AgentCodeItem[]> {
  return withTenant(db, scope.tenantId, async (trx) => {
    let query = withContent(trx, scope, kind).orderBy("agent_code.name");
    if (!options.includeDisabled) query = query.where("agent_code.enabled", "=", true);
    return (await query.execute()).map((row) => toItem(kind, row));
  });
}

/**
 * The agent's tools as a wake offers them (the shape of tool-runtime's AgentDefinedToolSpec): every
 * live tool, disabled ones too so their exclusion can be explained.
 */
export async function listAgentTools(
  db: Kysely<Database>,
  scope: AgentScope,
): Promise<
  Array<{
    name: string;
    description: string;
    parameterSchema: JsonSchemaObject;
    version: number;
    enabled: boolean;
  }>
> {
  const tools = await listAgentCode(db, scope, "tool", { includeDisabled: true });
  return tools.map(({ name, description, schema, version, enabled }) => ({
    name,
    description,
    parameterSchema: schema ?? { type: "object" },
    version,
    enabled,
  }));
}

/** The current version of one live item, or null. */
export function readAgentCode(
  db: Kysely<Database>,
  scope: AgentScope,
  kind: AgentCodeKind,
  name: string,
): Promise<AgentCodeItem | null> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const row = await withContent(trx, scope, kind).where("agent_code.name", "=", name).executeTakeFirst();
    return row === undefined ? null : toItem(kind, row);
  });
}

/**
 * One version of a live item (the version a wake offered), or null when the item was deleted since.
 * `enabled` is the item's flag now, so a tool disabled mid-wake is refused at execution.
 */
export function readAgentCodeVersion(
  db: Kysely<Database>,
  scope: AgentScope,
  kind: AgentCodeKind,
  name: string,
  version: number,
): Promise<AgentCodeItem | null> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const row = await liveHead(trx, scope, kind)
      .where("agent_code.name", "=", name)
      .innerJoin("agent_code_versions as v", (join) =>
        join.onRef("v.tenant_id", "=", "agent_code.tenant_id").onRef("v.code_id", "=", "agent_code.id"),
      )
      .where("v.version", "=", version)
      .select([
        "agent_code.name",
        "v.version",
        "agent_code.enabled",
        "v.description",
        "v.code",
        "v.schema",
        "v.requires",
      ])
      .executeTakeFirst();
    return row === undefined ? null : toItem(kind, row);
  });
}

function label(kind: AgentCodeKind): string {
  return kind === "ui_component" ? "UI component" : kind;
}

function plural(kind: AgentCodeKind): string {
  return kind === "library" ? "libraries" : `${label(kind)}s`;
}
