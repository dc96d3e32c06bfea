import { Id, type MemoryAuthor, MemoryStoreName, MemoryTarget, WakeloopError } from "@wakeloop/contracts";
import {
  listMemoryEntries,
  listMemoryStores,
  listMemoryVersions,
  readMemoryEntry,
  readMemoryVersion,
  writeMemory,
} from "@wakeloop/db";
import { z } from "zod";
import { findAgent } from "../agents/agent-store";
import type { Principal } from "../auth/principal";
import type { RouteDeps } from "../gateway-deps";
import { notFound } from "../http/api-error";
import { defineRoute, type Route } from "../http/route";

// The agent's memory for people (issue #10): list, read, correct and audit what an agent remembers.
// Writes are new immutable versions authored by the API key, under the same limits and optimistic
// concurrency as the agent's own writes.

// `target` is checked in the handler, after the agent: another tenant's agent is a 404 whatever else the
// request gets wrong.
const EntryQuery = z.strictObject({
  target: z.string().optional().describe("The entry's target (required; checked after the agent)"),
});
const ListQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(500).default(100) });
const VersionsQuery = ListQuery.extend(EntryQuery.shape);
const DeleteQuery = EntryQuery.extend({ expected_version_id: Id.optional() });

function valid<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new WakeloopError("invalid_request", `${what} ${JSON.stringify(value ?? null)} is not valid`, {
      details: { issues: parsed.error.issues },
    });
  }
  return parsed.data;
}

function apiAuthor(principal: Principal): MemoryAuthor {
  return { kind: "api", session_id: null, wake_id: null, tool_call_id: null, api_key_id: principal.keyId };
}

export function memoryRoutes({ db, config }: RouteDeps): Route[] {
  const limits = config.memoryLimits;
  /** The agent must be the tenant's: another tenant's agent id is a 404, never an empty store. */
  const scopeOf = async (principal: Principal, agentId: string) => {
    await findAgent(db, principal.tenantId, agentId);
    return { tenantId: principal.tenantId, agentId };
  };
  /** The agent first, then the store and target the route names. */
  const entryOf = async (principal: Principal, params: { id: string; store: string }, target?: string) => ({
    scope: await scopeOf(principal, params.id),
    store: valid(MemoryStoreName, params.store, "store"),
    target: valid(MemoryTarget, target, "target"),
  });
  return [
    defineRoute({
      method: "GET",
      path: "/v1/agents/{id}/memory",
      operationId: "listMemoryStores",
      summary: "The agent's memory stores with their entry counts and sizes",
      tag: "memory",
      access: "member",
      response: { status: 200, body: "MemoryStoreList", description: "The stores holding entries" },
      handler: async ({ principal, params }) => ({
        data: await listMemoryStores(db, await scopeOf(principal, params.id)),
      }),
    }),
    defineRoute({
      method: "GET",
      path: "/v1/agents/{id}/memory/{store}/entries",
      operationId: "listMemoryEntries",
      summary: "The live entries of one store, by target",
      tag: "memory",
      access: "member",
      query: ListQuery,
      response: { status: 200, body: "MemoryEntryList", description: "Entries with their content" },
      handler: async ({ principal, params, query }) => {
        const scope = await scopeOf(principal, params.id);
        const store = valid(MemoryStoreName, params.store, "store");
        return { data: await listMemoryEntries(db, scope, store, { limit: query.limit }) };
      },
    }),
    defineRoute({
      method: "GET",
      path: "/v1/agents/{id}/memory/{store}/entry",
      operationId: "getMemoryEntry",
      summary: "One live entry with its current version id",
      tag: "memory",
      access: "member",
      query: EntryQuery,
      response: { status: 200, body: "MemoryEntry", description: "The entry" },
      handler: async ({ principal, params, query }) => {
        const { scope, store, target } = await entryOf(principal, params, query.target);
        const entry = await readMemoryEntry(db, scope, store, target);
        if (entry === null) throw notFound("memory entry", `${store}/${target}`);
        return entry;
      },
    }),
    defineRoute({
      method: "PUT",
      path: "/v1/agents/{id}/memory/{store}/entry",
      operationId: "putMemoryEntry",
      summary: "Write an entry: a new immutable version authored by this API key (409 on a stale version)",
      tag: "memory",
      access: "member",
      query: EntryQuery,
      body: "PutMemoryEntryRequest",
      response: { status: 200, body: "MemoryVersion", description: "The version written" },
      handler: async ({ principal, params, query, body }) => {
        const { scope, store, target } = await entryOf(principal, params, query.target);
        return writeMemory(
          db,
          scope,
          {
            store,
            target,
            content: body.content,
            ...(body.expected_version_id !== undefined && { expectedVersionId: body.expected_version_id }),
            author: apiAuthor(principal),
          },
          limits,
        );
      },
    }),
    defineRoute({
      method: "DELETE",
      path: "/v1/agents/{id}/memory/{store}/entry",
      operationId: "deleteMemoryEntry",
      summary: "Delete an entry; its history keeps a deleted version",
      tag: "memory",
      access: "member",
      query: DeleteQuery,
      response: { status: 200, body: "MemoryVersion", description: "The deleted version" },
      handler: async ({ principal, params, query }) => {
        const { scope, store, target } = await entryOf(principal, params, query.target);
        return writeMemory(
          db,
          scope,
          {
            store,
            target,
            content: "",
            delete: true,
            ...(query.expected_version_id !== undefined && { expectedVersionId: query.expected_version_id }),
            author: apiAuthor(principal),
          },
          limits,
        );
      },
    }),
    defineRoute({
      method: "GET",
      path: "/v1/agents/{id}/memory/{store}/versions",
      operationId: "listMemoryVersions",
      summary: "An entry's immutable versions, newest first, with author, time and content hash",
      tag: "memory",
      access: "member",
      query: VersionsQuery,
      response: { status: 200, body: "MemoryVersionList", description: "The versions" },
      handler: async ({ principal, params, query }) => {
        const { scope, store, target } = await entryOf(principal, params, query.target);
        return { data: await listMemoryVersions(db, scope, store, target, { limit: query.limit }) };
      },
    }),
    defineRoute({
      method: "GET",
      path: "/v1/agents/{id}/memory-versions/{version_id}",
      operationId: "getMemoryVersion",
      summary: "One version of any entry of the agent's memory",
      tag: "memory",
      access: "member",
      response: { status: 200, body: "MemoryVersion", description: "The version" },
      handler: async ({ principal, params }) => {
        const version = await readMemoryVersion(db, await scopeOf(principal, params.id), params.version_id);
        if (version === null) throw notFound("memory version", params.version_id);
        return version;
      },
    }),
  ];
}
