import {
  AgentSpec,
  EnvironmentSpec,
  NOTEPAD_STORE,
  RetrievalSearchInput,
  SessionSearchContextInput,
  SessionSearchTracesInput,
  SKILLS_STORE,
} from "@wakeloop/contracts";
import {
  type EmbeddingKind,
  type EventHit,
  findAgentSession,
  indexedEventsById,
  listAgentSessions,
  type MemoryHit,
  type MemorySearchOptions,
  memoryEntriesByKey,
  readJson,
  readRankingFacts,
  readVectors,
  readVectorWindow,
  type SessionLineage,
  type SessionRankingFacts,
  type SpanHit,
  searchMemory,
  searchSessionEvents,
  searchSpans,
  type VectorKey,
} from "@wakeloop/db";
import { setupFingerprint } from "@wakeloop/tool-runtime";
import {
  type Candidate,
  cosineSimilarity,
  describePriors,
  type HitOrigin,
  type RankedCandidate,
  rankCandidates,
  relationOf,
} from "./hit-ranking";
import { type PhaseClock, phaseClock } from "./search-phases";
import { parseInput, type ToolCall } from "./tool-call";

export type RetrievalToolName = "retrieval_search" | "session_search_context" | "session_search_traces";

/** Stores that are not memory to retrieve: they have their own tools. */
export const NOT_RETRIEVED = [SKILLS_STORE, NOTEPAD_STORE];

const textWhy = (match: "full_text" | "trigram", rank: number) =>
  `${match === "full_text" ? "full-text rank" : "trigram similarity"} ${rank.toFixed(3)}`;

type TextMatch = { match: "full_text" | "trigram"; rank: number } | null;

/** One candidate of a search, from whichever list found it first. */
type Found =
  | { source: "memory"; row: Omit<MemoryHit, "rank" | "match">; text: TextMatch }
  | { source: "session_event"; row: Omit<EventHit, "rank" | "match">; text: TextMatch }
  | { source: "trace"; row: SpanHit };

const memoryKey = (store: string, target: string) => `memory:${store}/${target}`;
const eventKey = (eventId: string) => `event:${eventId}`;

/** Full-text hits before trigram ones, each by rank: the two scores are not on one scale. */
const textOrder = (text: TextMatch) =>
  text === null ? -1 : (text.match === "full_text" ? 1_000 : 0) + text.rank;

/** Most sessions a lineage scope searches (openboa's bounded cluster). */
const MAX_LINEAGE_SESSIONS = 200;
/** Candidates each list contributes to fusion when there is more than one list to fuse. */
const FUSION_DEPTH = 20;

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

/**
 * What one search reads: the caller's agent, its session (null for a caller that is not a session, a
 * wake's recall: no priors then) and whether embeddings are on.
 */
export type SearchCall = Pick<ToolCall, "db" | "scope" | "search"> & { sessionId: string | null };

/** Memory entries searched: stores, or every store but the excluded ones; only enabled ones (skills). */
export type MemoryFilter = Pick<MemorySearchOptions, "stores" | "excludeStores" | "enabledOnly">;

export interface SearchPlan {
  /** The full-text query (websearch syntax). */
  query: string;
  /** The text the semantic list embeds (default the query). */
  meaning?: string;
  limit: number;
  memory: MemoryFilter | null;
  events: { sessionIds?: string[]; excludeSessionId?: string } | null;
  spans: { sessionIds?: string[] } | null;
}

function originOf(facts: SessionRankingFacts): HitOrigin {
  const agent = readJson(AgentSpec, facts.agentSpec, `agent spec of session ${facts.sessionId}`);
  const environment =
    facts.environmentSpec === null
      ? null
      : readJson(EnvironmentSpec, facts.environmentSpec, `environment of session ${facts.sessionId}`);
  return {
    sessionId: facts.sessionId,
    parentSessionId: facts.parentSessionId,
    setupFingerprint: setupFingerprint({ agent, environment }).fingerprint,
    outcome: facts.outcome,
  };
}

/**
 * The semantic list: the query's vector against the full-text candidates' vectors and the agent's
 * newest ones (pgvector is not available, so similarity is computed here over that bounded set), best
 * first, above the minimum similarity. Neighbours full text did not find are added to `found`.
 */
async function semanticList(
  call: SearchCall,
  plan: SearchPlan,
  vector: Float32Array,
  found: Map<string, Found>,
  depth: number,
  clock: PhaseClock,
): Promise<{ keys: string[]; similarity: Map<string, number>; vectors: number; vectorsRead: number }> {
  const { db, scope, search } = call;
  const space = search.embeddings?.space ?? "";
  const kinds: EmbeddingKind[] = [
    ...(plan.memory ? ["memory" as const] : []),
    ...(plan.events ? ["event" as const] : []),
  ];
  const candidates = [...found.values()].flatMap((hit): VectorKey[] =>
    hit.source === "memory"
      ? [{ kind: "memory", ref: hit.row.store, target: hit.row.target }]
      : hit.source === "session_event"
        ? [{ kind: "event", ref: hit.row.event_id, target: "" }]
        : [],
  );
  const stamps = await readVectorWindow(db, scope, {
    model: space,
    window: search.vectorWindow,
    kinds,
    ...(plan.events?.sessionIds !== undefined && { sessionIds: plan.events.sessionIds }),
    ...(plan.events?.excludeSessionId !== undefined && { excludeSessionId: plan.events.excludeSessionId }),
    memory: plan.memory ?? {},
    candidates,
  });
  clock.lap("vector_window");
  // The bytes only of vectors this replica does not hold yet (or holds from an earlier embedding).
  const cacheKey = (row: VectorKey) => `${space}\u0000${row.kind}\u0000${row.ref}\u0000${row.target}`;
  const unread = stamps.filter((row) => search.vectorCache.get(cacheKey(row), row.stamp) === undefined);
  for (const row of await readVectors(db, scope, space, unread)) {
    search.vectorCache.set(cacheKey(row), row.stamp, row.vector);
  }
  const stored = stamps.flatMap((row) => {
    const held = search.vectorCache.get(cacheKey(row), row.stamp);
    return held === undefined ? [] : [{ ...row, vector: held }];
  });
  clock.lap("vector_bytes");
  const nearest = stored
    .map((row) => ({
      row,
      key: row.kind === "memory" ? memoryKey(row.ref, row.target) : eventKey(row.ref),
      similarity: cosineSimilarity(vector, row.vector),
    }))
    .filter((item) => item.similarity >= search.minSimilarity)
    .sort((a, b) => b.similarity - a.similarity || (a.key < b.key ? -1 : 1))
    .slice(0, depth);
  clock.lap("similarity");
  const missing = nearest.filter((item) => !found.has(item.key));
  const [events, entries] = await Promise.all([
    indexedEventsById(
      db,
      scope,
      missing.filter((item) => item.row.kind === "event").map((item) => item.row.ref),
    ),
    memoryEntriesByKey(
      db,
      scope,
      missing
        .filter((item) => item.row.kind === "memory")
        .map((item) => ({ store: item.row.ref, target: item.row.target })),
    ),
  ]);
  for (const row of events) found.set(eventKey(row.event_id), { source: "session_event", row, text: null });
  for (const row of entries)
    found.set(memoryKey(row.store, row.target), { source: "memory", row, text: null });
  // A neighbour whose entry went away between the two reads is no hit.
  const kept = nearest.filter((item) => found.has(item.key));
  clock.lap("neighbours");
  return {
    keys: kept.map((item) => item.key),
    similarity: new Map(kept.map((item) => [item.key, item.similarity])),
    vectors: stored.length,
    vectorsRead: unread.length,
  };
}

/** The session a candidate came from: the event's or span's, or the one that wrote the memory version. */
function sessionOf(hit: Found, versionSessions: Map<string, string | null>): string | null {
  switch (hit.source) {
    case "memory":
      return versionSessions.get(hit.row.version_id) ?? null;
    case "session_event":
      return hit.row.session_id;
    case "trace":
      return hit.row.session_id;
  }
}

export interface RankedHit {
  found: Found;
  ranked: RankedCandidate<Found>;
  similarity: number | undefined;
  origin: HitOrigin | null;
  current: HitOrigin | null;
}

/** Why a hit ranked: its lists and their scores, then the priors it earned. */
export function whyOf({ found, ranked, similarity }: RankedHit): string {
  const parts: string[] = [];
  if (found.source === "trace") parts.push(`query found in the span ${found.row.matched}; newest first`);
  else if (found.text !== null) parts.push(textWhy(found.text.match, found.text.rank));
  const semantic = ranked.ranks.find((rank) => rank.list === "semantic");
  if (semantic !== undefined && similarity !== undefined) {
    parts.push(`semantic similarity ${similarity.toFixed(3)} (#${semantic.rank})`);
  }
  if (ranked.priors.length > 0) parts.push(describePriors(ranked.priors));
  return parts.join("; ");
}

/**
 * The exact reread a hit recommends. A hit from a session of another agent setup recommends comparing
 * setups first (openboa), then the reread.
 */
function nextStepOf({ found, origin, current }: RankedHit) {
  const reread =
    found.source === "memory"
      ? { tool: "memory_read", input: { store: found.row.store, target: found.row.target } }
      : found.source === "session_event"
        ? {
            tool: "session_get_events",
            // The event with what led to it and what followed.
            input: { session_id: found.row.session_id, after_seq: Math.max(0, found.row.seq - 3), limit: 6 },
          }
        : {
            tool: "session_get_trace",
            input: {
              session_id: found.row.session_id,
              ...(found.row.wake_id !== null && { wake_id: found.row.wake_id }),
            },
          };
  const drifted =
    found.source !== "memory" &&
    origin !== null &&
    current !== null &&
    origin.sessionId !== current.sessionId &&
    origin.setupFingerprint !== current.setupFingerprint;
  if (!drifted) return { next_step: reread };
  return {
    next_step: { tool: "agent_compare_setup", input: { session_id: origin.sessionId } },
    after_that: reread,
  };
}

function hitView(hit: RankedHit): Record<string, unknown> {
  const { found, ranked, origin, current } = hit;
  const provenance =
    origin === null
      ? {}
      : {
          ...(found.source === "memory" && { written_in_session: origin.sessionId }),
          ...(current !== null && {
            relation_to_current: relationOf(current, origin),
            setup_matches_current: origin.setupFingerprint === current.setupFingerprint,
          }),
        };
  const ranking = {
    score: Number(ranked.score.toFixed(6)),
    lists: ranked.ranks,
    priors: ranked.priors,
  };
  const common = { why: whyOf(hit), ranking, ...provenance, ...nextStepOf(hit) };
  switch (found.source) {
    case "memory":
      return {
        source: "memory",
        store: found.row.store,
        target: found.row.target,
        version_id: found.row.version_id,
        snippet: found.row.snippet,
        ...common,
      };
    case "session_event": {
      const row = found.row;
      return {
        source: "session_event",
        session_id: row.session_id,
        event_id: row.event_id,
        seq: row.seq,
        type: row.type,
        ...(row.tool_name !== null && { tool_name: row.tool_name }),
        created_at: row.created_at,
        snippet: row.snippet,
        ...common,
      };
    }
    case "trace": {
      const row = found.row;
      return {
        source: "trace",
        session_id: row.session_id,
        trace_id: row.trace_id,
        span_id: row.span_id,
        wake_id: row.wake_id,
        name: row.name,
        status: row.status_code,
        start_time: row.start_time,
        duration_ms: Math.round(row.duration_ms * 10) / 10,
        snippet: row.name,
        ...common,
      };
    }
  }
}

/**
 * One search over memory entries, session events and spans of the caller's agent: full-text (and span)
 * lists, a semantic list when embeddings are on, fused by reciprocal rank and weighed by the priors.
 * The one engine of `retrieval_search`, `session_search_*`, `memory_search`, `skills_search` and recall.
 */
export async function rankedSearch(call: SearchCall, plan: SearchPlan) {
  const { db, scope } = call;
  const clock = phaseClock();
  const embeddings = plan.memory !== null || plan.events !== null ? call.search.embeddings : null;
  const depth = embeddings === null && plan.spans === null ? plan.limit : Math.max(plan.limit, FUSION_DEPTH);
  // Asked at once, beside the full-text searches; a failure leaves the search to full text.
  const queryVector = embeddings
    ?.embedQuery(plan.meaning ?? plan.query)
    .finally(() => clock.sinceStart("embedding"))
    .then(
      (vector) => ({ vector }),
      (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }),
    );
  const [memory, events, spans] = await Promise.all([
    plan.memory ? searchMemory(db, scope, { ...plan.memory, query: plan.query, limit: depth }) : [],
    plan.events ? searchSessionEvents(db, scope, { query: plan.query, limit: depth, ...plan.events }) : [],
    plan.spans ? searchSpans(db, scope, { query: plan.query, limit: depth, ...plan.spans }) : [],
  ]);
  clock.lap("full_text");
  const found = new Map<string, Found>();
  for (const { rank, match, ...row } of memory) {
    found.set(memoryKey(row.store, row.target), { source: "memory", row, text: { match, rank } });
  }
  for (const { rank, match, ...row } of events) {
    found.set(eventKey(row.event_id), { source: "session_event", row, text: { match, rank } });
  }
  const fullText = [...found.entries()]
    .sort(
      ([, a], [, b]) =>
        textOrder(b.source === "trace" ? null : b.text) - textOrder(a.source === "trace" ? null : a.text),
    )
    .map(([key]) => key);
  const traceKeys = spans.map((row) => {
    const key = `trace:${row.trace_id}/${row.span_id}`;
    found.set(key, { source: "trace", row });
    return key;
  });
  const asked = await queryVector;
  clock.lap("embedding_wait");
  const semantic =
    asked !== undefined && "vector" in asked
      ? await semanticList(call, plan, asked.vector, found, depth, clock)
      : { keys: [], similarity: new Map<string, number>(), vectors: 0, vectorsRead: 0 };

  // A caller that is not a session earns no priors: the facts are not read.
  const facts =
    call.sessionId === null
      ? { sessions: [], versionSessions: new Map<string, string | null>() }
      : await readRankingFacts(db, scope, {
          sessionIds: [
            call.sessionId,
            ...[...found.values()].flatMap((hit) => (hit.source === "memory" ? [] : [hit.row.session_id])),
          ],
          memoryVersionIds: [...found.values()].flatMap((hit) =>
            hit.source === "memory" ? [hit.row.version_id] : [],
          ),
        });
  const origins = new Map(facts.sessions.map((session) => [session.sessionId, originOf(session)]));
  const current = call.sessionId === null ? null : (origins.get(call.sessionId) ?? null);
  clock.lap("priors");
  const candidates: Array<Candidate<Found>> = [...found.entries()].map(([key, hit]) => {
    const session = sessionOf(hit, facts.versionSessions);
    return { key, hit, origin: session === null ? null : (origins.get(session) ?? null) };
  });
  const ranked = rankCandidates(
    candidates,
    {
      ...(fullText.length > 0 && { full_text: fullText }),
      ...(semantic.keys.length > 0 && { semantic: semantic.keys }),
      ...(traceKeys.length > 0 && { traces: traceKeys }),
    },
    current,
  );
  clock.lap("fusion");
  const ranking = asked === undefined ? "full_text" : "vector" in asked ? "hybrid" : "full_text";
  clock.record({
    "wakeloop.retrieval.ranking": ranking,
    "wakeloop.retrieval.vectors": semantic.vectors,
    "wakeloop.retrieval.vectors_read": semantic.vectorsRead,
  });
  return {
    ranking,
    ...(asked !== undefined && "error" in asked && { embeddings_error: asked.error }),
    hits: ranked.slice(0, plan.limit).map(
      (candidate): RankedHit => ({
        found: candidate.hit,
        ranked: candidate,
        similarity: semantic.similarity.get(candidate.key),
        origin: candidate.origin,
        current,
      }),
    ),
  };
}

/** A search as the tools answer it: each hit with its source, snippet, why and next step. */
export async function search(call: SearchCall, plan: SearchPlan) {
  const found = await rankedSearch(call, plan);
  return { ...found, hits: found.hits.map(hitView) };
}

/** Runs one retrieval tool over the caller's agent (reads only, on the pool). */
export async function runRetrievalTool(
  call: ToolCall,
  tool: RetrievalToolName,
): Promise<Record<string, unknown>> {
  switch (tool) {
    case "retrieval_search": {
      const input = parseInput(RetrievalSearchInput, call.input, tool);
      const sessionIds = await sessionScope(call, input);
      const inScope = sessionIds === undefined ? {} : { sessionIds };
      const found = await search(call, {
        query: input.query,
        limit: input.limit,
        memory: input.sources.includes("memory") ? { excludeStores: NOT_RETRIEVED } : null,
        events: input.sources.includes("sessions")
          ? { ...inScope, ...(!input.include_current_session && { excludeSessionId: call.sessionId }) }
          : null,
        spans: input.sources.includes("traces") ? inScope : null,
      });
      return {
        query: input.query,
        sources: input.sources,
        ...found,
        note: "hits are candidates from memory and earlier sessions: reread one with its next_step before relying on it",
      };
    }
    case "session_search_context": {
      const input = parseInput(SessionSearchContextInput, call.input, tool);
      const sessionIds = await sessionScope(call, input);
      const found = await search(call, {
        query: input.query,
        limit: input.limit,
        memory: null,
        events: {
          ...(sessionIds !== undefined && { sessionIds }),
          ...(!input.include_current_session &&
            input.session_id === undefined && { excludeSessionId: call.sessionId }),
        },
        spans: null,
      });
      return { query: input.query, ...found };
    }
    case "session_search_traces": {
      const input = parseInput(SessionSearchTracesInput, call.input, tool);
      const sessionIds = await sessionScope(call, input);
      const found = await search(call, {
        query: input.query,
        limit: input.limit,
        memory: null,
        events: null,
        spans: sessionIds === undefined ? {} : { sessionIds },
      });
      return { query: input.query, hits: found.hits };
    }
  }
}
