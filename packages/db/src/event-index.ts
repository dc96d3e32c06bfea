import type { Content, SessionEvent } from "@wakeloop/contracts";
import { type Kysely, sql } from "kysely";
import type { Database } from "./database";
import type { MemoryScope } from "./memory-store";
import { withTenant } from "./tenant-scope";

/*
 * The search index of session history (migration 0017): the text of each committed message, tool call
 * and tool result, keyed by event id, scoped to the session's tenant and agent. The memory-retrieval
 * service writes it from the committed-events stream; nothing here rescans `session_events`.
 */

/** Characters of one event kept searchable; a longer tool result is indexed by its beginning. */
export const MAX_INDEXED_CHARS = 32_000;

export interface IndexableText {
  content: string;
  toolName: string | null;
  /** A result's tool call (its event id): the index takes the tool name from it. */
  toolUseId: string | null;
}

const contentText = (content: Content) =>
  content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n");

function textOf(content: Content, toolUseId: string | null): IndexableText | null {
  const text = contentText(content);
  return text.trim() === "" ? null : { content: text.slice(0, MAX_INDEXED_CHARS), toolName: null, toolUseId };
}

/** The searchable text of an event, or null for events that carry none (status, spans, usage). */
export function indexableText(event: SessionEvent): IndexableText | null {
  switch (event.type) {
    case "user.message":
    case "agent.message":
      return textOf(event.content, null);
    case "agent.tool_result":
      return textOf(event.content, event.tool_use_id);
    case "agent.mcp_tool_result":
      return textOf(event.content, event.mcp_tool_use_id);
    case "user.custom_tool_result":
      return textOf(event.content, event.custom_tool_use_id);
    case "agent.tool_use":
    case "agent.mcp_tool_use":
    case "agent.custom_tool_use":
      return {
        content: JSON.stringify(event.input).slice(0, MAX_INDEXED_CHARS),
        toolName: event.name,
        toolUseId: null,
      };
    default:
      return null;
  }
}

/** A committed event and the tenant whose session it is (the subject it was relayed on says so). */
export interface TenantEvent {
  tenantId: string;
  event: SessionEvent;
}

/**
 * Indexes the events that carry text, of any tenants, in one statement (migration 0028). The agent
 * comes from each event's session, which must be its tenant's; a result's tool name from its committed
 * tool call. An event already indexed (a redelivery) is left as it is. Returns how many rows were added.
 */
export async function indexCommittedEvents(
  db: Kysely<Database>,
  events: readonly TenantEvent[],
): Promise<number> {
  const rows = events.flatMap(({ tenantId, event }) => {
    const text = indexableText(event);
    return text === null
      ? []
      : [
          {
            event_id: event.id,
            tenant_id: tenantId,
            session_id: event.session_id,
            seq: event.seq,
            type: event.type,
            tool_name: text.toolName,
            tool_use_id: text.toolUseId,
            content: text.content,
            created_at: event.created_at,
          },
        ];
  });
  if (rows.length === 0) return 0;
  const result = await sql<{ added: string }>`
    SELECT wl_index_session_events(${JSON.stringify(rows)}::jsonb) AS added`.execute(db);
  return Number(result.rows[0]?.added ?? 0);
}

/** `indexCommittedEvents` for the events of one tenant. */
export function indexSessionEvents(
  db: Kysely<Database>,
  tenantId: string,
  events: readonly SessionEvent[],
): Promise<number> {
  return indexCommittedEvents(
    db,
    events.map((event) => ({ tenantId, event })),
  );
}

export interface EventSearchOptions {
  /** Web search syntax; one token with no full-text match falls back to trigram similarity. */
  query: string;
  /** Only these sessions (default: every session of the agent). */
  sessionIds?: string[];
  /** Leave this session out (the caller's own). */
  excludeSessionId?: string;
  limit: number;
}

export interface EventHit {
  event_id: string;
  session_id: string;
  seq: number;
  type: string;
  tool_name: string | null;
  created_at: string;
  snippet: string;
  rank: number;
  match: "full_text" | "trigram";
}

/** Ranked search over the agent's indexed session events, in the same two steps as `searchMemory`. */
export function searchSessionEvents(
  db: Kysely<Database>,
  scope: MemoryScope,
  options: EventSearchOptions,
): Promise<EventHit[]> {
  return withTenant(db, scope.tenantId, async (trx) => {
    type Row = Omit<EventHit, "match" | "created_at"> & { created_at: Date };
    const args = sql`${scope.agentId}, ${options.query}, ${options.sessionIds ?? null}::text[],
      ${options.excludeSessionId ?? null}::text, ${options.limit}::int`;
    const toHit = (match: EventHit["match"]) => (row: Row) => ({
      ...row,
      created_at: row.created_at.toISOString(),
      rank: Number(row.rank),
      match,
    });
    const fullText = await sql<Row>`SELECT * FROM wl_event_search_text(${args})`.execute(trx);
    if (fullText.rows.length > 0) return fullText.rows.map(toHit("full_text"));
    if (/\s/.test(options.query.trim())) return [];
    const trigram = await sql<Row>`SELECT * FROM wl_event_search_trigram(${args})`.execute(trx);
    return trigram.rows.map(toHit("trigram"));
  });
}

export interface SpanHit {
  trace_id: string;
  span_id: string;
  session_id: string;
  wake_id: string | null;
  name: string;
  status_code: string;
  start_time: string;
  duration_ms: number;
  /** Where the query matched: the span name or its attributes. */
  matched: "name" | "attributes";
}

/** The agent's spans (through their sessions) whose name or attributes contain the query, newest first. */
export function searchSpans(
  db: Kysely<Database>,
  scope: MemoryScope,
  options: { query: string; sessionIds?: string[]; limit: number },
): Promise<SpanHit[]> {
  return withTenant(db, scope.tenantId, async (trx) => {
    type Row = Omit<SpanHit, "start_time"> & { start_time: Date };
    const result = await sql<Row>`SELECT * FROM wl_span_search(${scope.agentId}, ${options.query},
      ${options.sessionIds ?? null}::text[], ${options.limit}::int)`.execute(trx);
    return result.rows.map((row) => ({
      ...row,
      start_time: row.start_time.toISOString(),
      duration_ms: Number(row.duration_ms),
    }));
  });
}

/** Indexed events of the agent by id, as hits with no rank (found by their vectors, not their words). */
export function indexedEventsById(
  db: Kysely<Database>,
  scope: MemoryScope,
  eventIds: readonly string[],
): Promise<Array<Omit<EventHit, "rank" | "match">>> {
  if (eventIds.length === 0) return Promise.resolve([]);
  return withTenant(db, scope.tenantId, async (trx) => {
    const result = await sql<Omit<EventHit, "rank" | "match" | "created_at"> & { created_at: Date }>`
      SELECT e.event_id, e.session_id, e.seq, e.type, e.tool_name, e.created_at, left(e.content, 200) AS snippet
      FROM session_event_index e
      WHERE e.tenant_id = ${scope.tenantId} AND e.agent_id = ${scope.agentId}
        AND e.event_id = ANY (${[...eventIds]}::text[])`.execute(trx);
    return result.rows.map((row) => ({ ...row, created_at: row.created_at.toISOString() }));
  });
}
