import {
  NOTEPAD_STORE,
  RetrievalSearchInput,
  SessionSearchContextInput,
  SessionSearchTracesInput,
  SKILLS_STORE,
} from "@wakeloop/contracts";
import {
  type EventHit,
  findAgentSession,
  listAgentSessions,
  type MemoryHit,
  type SessionLineage,
  type SpanHit,
  searchMemory,
  searchSessionEvents,
  searchSpans,
} from "@wakeloop/db";
import { parseInput, type ToolCall } from "./tool-call";

export type RetrievalToolName = "retrieval_search" | "session_search_context" | "session_search_traces";

const why = (match: "full_text" | "trigram", rank: number) =>
  `${match === "full_text" ? "full-text rank" : "trigram similarity"} ${rank.toFixed(3)}`;

/** A memory search hit as the tools show it. */
export function memoryHitView(hit: MemoryHit) {
  return {
    source: "memory" as const,
    store: hit.store,
    target: hit.target,
    version_id: hit.version_id,
    snippet: hit.snippet,
    why: why(hit.match, hit.rank),
    next_step: { tool: "memory_read", input: { store: hit.store, target: hit.target } },
  };
}

function eventHitView(hit: EventHit) {
  return {
    source: "session_event" as const,
    session_id: hit.session_id,
    event_id: hit.event_id,
    seq: hit.seq,
    type: hit.type,
    ...(hit.tool_name !== null && { tool_name: hit.tool_name }),
    created_at: hit.created_at,
    snippet: hit.snippet,
    why: why(hit.match, hit.rank),
    // The event with what led to it and what followed.
    next_step: {
      tool: "session_get_events",
      input: { session_id: hit.session_id, after_seq: Math.max(0, hit.seq - 3), limit: 6 },
    },
  };
}

function spanHitView(hit: SpanHit) {
  return {
    source: "trace" as const,
    session_id: hit.session_id,
    trace_id: hit.trace_id,
    span_id: hit.span_id,
    wake_id: hit.wake_id,
    name: hit.name,
    status: hit.status_code,
    start_time: hit.start_time,
    duration_ms: Math.round(hit.duration_ms * 10) / 10,
    snippet: hit.name,
    why: `query found in the span ${hit.matched}; newest first`,
    next_step: {
      tool: "session_get_trace",
      input: { session_id: hit.session_id, ...(hit.wake_id !== null && { wake_id: hit.wake_id }) },
    },
  };
}

/** Full-text hits before trigram ones, each by rank: the two scores are not on one scale. */
const order = (hit: { match: "full_text" | "trigram"; rank: number }) =>
  (hit.match === "full_text" ? 1_000 : 0) + hit.rank;

/** Most sessions a lineage scope searches (openboa's bounded cluster). */
const MAX_LINEAGE_SESSIONS = 200;

/**
 * The sessions a search covers: one named session, the calling session's lineage cluster, or (undefined)
 * every session of the agent.
 */
async function sessionScope(
  call: ToolCall,
  filter: { session_id?: string | undefined; lineage?: SessionLineage | undefined },
): Promise<string[] | undefined> {
  if (filter.session_id !== undefined) return [filter.session_id];
  if (filter.lineage === undefined) return undefined;
  const current = await findAgentSession(call.db, call.scope, call.sessionId);
  if (current === null) return [];
  const near = {
    sessionId: current.session.id,
    parentSessionId: current.session.parent_session_id,
    lineage: filter.lineage,
  };
  const { sessions } = await listAgentSessions(call.db, { ...call.scope, near, limit: MAX_LINEAGE_SESSIONS });
  return sessions.map((found) => found.session.id);
}

/** Query, limit and session scope of a search, as the db searches take them. */
const searchOf = (input: { query: string; limit: number }, sessionIds: string[] | undefined) => ({
  query: input.query,
  limit: input.limit,
  ...(sessionIds !== undefined && { sessionIds }),
});

/** Runs one retrieval tool over the caller's agent (reads only, on the pool). */
export async function runRetrievalTool(
  call: ToolCall,
  tool: RetrievalToolName,
): Promise<Record<string, unknown>> {
  const { db, scope } = call;
  switch (tool) {
    case "retrieval_search": {
      const input = parseInput(RetrievalSearchInput, call.input, tool);
      const sessionIds = await sessionScope(call, input);
      const [memory, events, spans] = await Promise.all([
        input.sources.includes("memory")
          ? searchMemory(db, scope, {
              query: input.query,
              limit: input.limit,
              excludeStores: [SKILLS_STORE, NOTEPAD_STORE],
            })
          : [],
        input.sources.includes("sessions")
          ? searchSessionEvents(db, scope, {
              ...searchOf(input, sessionIds),
              ...(!input.include_current_session && { excludeSessionId: call.sessionId }),
            })
          : [],
        input.sources.includes("traces") ? searchSpans(db, scope, searchOf(input, sessionIds)) : [],
      ]);
      const ranked = [
        ...memory.map((hit) => ({ order: order(hit), view: memoryHitView(hit) })),
        ...events.map((hit) => ({ order: order(hit), view: eventHitView(hit) })),
        // Span matches have no rank: after the ranked hits, newest first.
        ...spans.map((hit) => ({ order: -1, view: spanHitView(hit) })),
      ].sort((a, b) => b.order - a.order);
      return {
        query: input.query,
        sources: input.sources,
        hits: ranked.slice(0, input.limit).map((hit) => hit.view),
        note: "hits are candidates from memory and earlier sessions: reread one with its next_step before relying on it",
      };
    }
    case "session_search_context": {
      const input = parseInput(SessionSearchContextInput, call.input, tool);
      const sessionIds = await sessionScope(call, input);
      const hits = await searchSessionEvents(db, scope, {
        ...searchOf(input, sessionIds),
        ...(!input.include_current_session &&
          input.session_id === undefined && { excludeSessionId: call.sessionId }),
      });
      return { query: input.query, hits: hits.map(eventHitView) };
    }
    case "session_search_traces": {
      const input = parseInput(SessionSearchTracesInput, call.input, tool);
      const hits = await searchSpans(db, scope, searchOf(input, await sessionScope(call, input)));
      return { query: input.query, hits: hits.map(spanHitView) };
    }
  }
}
