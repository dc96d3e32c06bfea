import { performance } from "node:perf_hooks";
import { trace } from "@opentelemetry/api";

/**
 * Where one search's time goes, in order (each phase from the end of the one before):
 * - `full_text`: the memory, event and span searches (run together);
 * - `embedding_wait`: waiting for the query's vector after those (0 when it came first);
 * - `vector_window`: reading which vectors to rank (the candidates' and the recent window's, with stamps);
 * - `vector_bytes`: reading the bytes of those this replica does not hold (see `vector-cache.ts`);
 * - `similarity`: ranking them by cosine similarity;
 * - `neighbours`: reading the rows of neighbours full text did not find;
 * - `priors`: reading the priors' facts (sessions, setups, outcomes, memory authors);
 * - `fusion`: reciprocal rank fusion with the priors.
 * Besides, `embedding` is the query vector's own time from the search's start (it runs beside
 * `full_text`). Recorded on the active span as `wakeloop.retrieval.<phase>_ms`.
 */
export const SEARCH_PHASES = [
  "full_text",
  "embedding_wait",
  "vector_window",
  "vector_bytes",
  "similarity",
  "neighbours",
  "priors",
  "fusion",
  "embedding",
] as const;
export type SearchPhase = (typeof SEARCH_PHASES)[number];

/** Times consecutive phases of one search. */
export function phaseClock() {
  const started = performance.now();
  let last = started;
  const phases: Partial<Record<SearchPhase, number>> = {};
  return {
    /** Ends `phase` now (it began where the previous one ended). */
    lap(phase: SearchPhase) {
      const now = performance.now();
      phases[phase] = (phases[phase] ?? 0) + now - last;
      last = now;
    },
    /** Records `phase` as the time from the search's start until now (a phase run beside others). */
    sinceStart(phase: SearchPhase) {
      phases[phase] = performance.now() - started;
    },
    /** The phases as attributes of the span the search runs in (the service's `memory <tool>` span). */
    record(attributes: Record<string, string | number> = {}) {
      const timed = Object.entries(phases).map(([phase, ms]) => [
        `wakeloop.retrieval.${phase}_ms`,
        Math.round(ms * 1_000) / 1_000,
      ]);
      trace.getActiveSpan()?.setAttributes({ ...Object.fromEntries(timed), ...attributes });
    },
  };
}
export type PhaseClock = ReturnType<typeof phaseClock>;
