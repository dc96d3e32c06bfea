/*
 * How retrieval orders its candidates: reciprocal rank fusion of the ranked lists (full text, vector
 * similarity, traces) and openboa's mild deterministic priors (same agent setup, same outcome, lineage
 * relation). Pure: the facts come in, the order and the reasons go out; no clock, no I/O.
 */

/** RRF's k (Cormack, Clarke & Büttcher 2009): dampens how much the top rank of one list dominates. */
export const RRF_K = 60;

/** Reciprocal rank fusion: each list adds 1 / (k + rank) to each key it ranks (rank from 1, best first). */
export function reciprocalRankFusion(
  lists: ReadonlyArray<readonly string[]>,
  k = RRF_K,
): Map<string, number> {
  const scores = new Map<string, number>();
  for (const list of lists) {
    list.forEach((key, index) => {
      scores.set(key, (scores.get(key) ?? 0) + 1 / (k + index + 1));
    });
  }
  return scores;
}

/** Cosine similarity of two vectors of one model (0 when either is all zeros or the sizes differ). */
export function cosineSimilarity(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let index = 0; index < a.length; index++) {
    const x = a[index] as number;
    const y = b[index] as number;
    dot += x * y;
    normA += x * x;
    normB += y * y;
  }
  return normA === 0 || normB === 0 ? 0 : dot / Math.sqrt(normA * normB);
}

export interface Outcome {
  title: string;
  criteria: readonly string[];
}

/** Where a hit came from, as the priors see it (null when it has no session, e.g. an entry a person wrote). */
export interface HitOrigin {
  sessionId: string;
  parentSessionId: string | null;
  setupFingerprint: string;
  outcome: Outcome | null;
}

/** The calling session. */
export type RankingContext = HitOrigin;

export type Relation = "self" | "parent" | "child" | "sibling" | "same_agent";

export function relationOf(current: RankingContext, origin: HitOrigin): Relation {
  if (origin.sessionId === current.sessionId) return "self";
  if (origin.sessionId === current.parentSessionId) return "parent";
  if (origin.parentSessionId === current.sessionId) return "child";
  if (current.parentSessionId !== null && origin.parentSessionId === current.parentSessionId)
    return "sibling";
  return "same_agent";
}

/** Each prior multiplies the fused score by (1 + its boost): mild, so a much better match still wins. */
export const PRIOR_BOOSTS = {
  same_setup: 0.2,
  same_outcome: 0.15,
  relation: { parent: 0.1, child: 0.1, sibling: 0.05 },
} as const;

export interface AppliedPrior {
  prior: "same_setup" | "same_outcome" | "relation";
  boost: number;
  detail: string;
}

const normalized = (text: string) => text.trim().toLowerCase().replace(/\s+/g, " ");

/** How two outcomes match: the same title, or success criteria in common; null when they do not. */
export function outcomeMatch(a: Outcome, b: Outcome): string | null {
  if (normalized(a.title) === normalized(b.title)) return "same outcome title";
  const theirs = new Set(b.criteria.map(normalized));
  const shared = a.criteria.filter((criterion) => theirs.has(normalized(criterion))).length;
  return shared === 0 ? null : `${shared} shared success ${shared === 1 ? "criterion" : "criteria"}`;
}

/**
 * The priors a hit from `origin` earns for a search from `current`, in a fixed order (none when either
 * is unknown: a hit no session wrote, a caller that is not a session of the agent).
 */
export function rankingPriors(current: RankingContext | null, origin: HitOrigin | null): AppliedPrior[] {
  if (origin === null || current === null) return [];
  const applied: AppliedPrior[] = [];
  if (origin.setupFingerprint === current.setupFingerprint) {
    applied.push({
      prior: "same_setup",
      boost: PRIOR_BOOSTS.same_setup,
      detail: `same agent setup ${origin.setupFingerprint}`,
    });
  }
  const outcome =
    current.outcome !== null && origin.outcome !== null
      ? outcomeMatch(current.outcome, origin.outcome)
      : null;
  if (outcome !== null)
    applied.push({ prior: "same_outcome", boost: PRIOR_BOOSTS.same_outcome, detail: outcome });
  const relation = relationOf(current, origin);
  if (relation === "parent" || relation === "child" || relation === "sibling") {
    applied.push({
      prior: "relation",
      boost: PRIOR_BOOSTS.relation[relation],
      detail: `${relation} session`,
    });
  }
  return applied;
}

/** A list a candidate was ranked in, and its rank there (from 1). */
export interface ListRank {
  list: "full_text" | "semantic" | "traces";
  rank: number;
}

export interface Candidate<H> {
  /** Unique across every list (e.g. `event:<id>`, `memory:<store>/<target>`). */
  key: string;
  hit: H;
  origin: HitOrigin | null;
}

export interface RankedCandidate<H> extends Candidate<H> {
  score: number;
  fused: number;
  ranks: ListRank[];
  priors: AppliedPrior[];
}

/**
 * Orders candidates by their fused rank times their priors. Ties (equal scores) go to the better
 * fused rank, then the key, so the order is the same on every replica and every run.
 */
export function rankCandidates<H>(
  candidates: ReadonlyArray<Candidate<H>>,
  lists: Readonly<Partial<Record<ListRank["list"], readonly string[]>>>,
  current: RankingContext | null,
): RankedCandidate<H>[] {
  const named = Object.entries(lists) as Array<[ListRank["list"], readonly string[]]>;
  const fused = reciprocalRankFusion(named.map(([, keys]) => keys));
  const ranked = candidates.map((candidate) => {
    const priors = rankingPriors(current, candidate.origin);
    const base = fused.get(candidate.key) ?? 0;
    const ranks = named.flatMap(([list, keys]) => {
      const index = keys.indexOf(candidate.key);
      return index === -1 ? [] : [{ list, rank: index + 1 }];
    });
    const boost = priors.reduce((sum, prior) => sum + prior.boost, 0);
    return { ...candidate, fused: base, score: base * (1 + boost), ranks, priors };
  });
  return ranked.sort(
    (a, b) => b.score - a.score || b.fused - a.fused || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
  );
}

/** "same setup +20%, parent session +10%": the priors a hit got, for its `why`. */
export function describePriors(priors: readonly AppliedPrior[]): string {
  return priors.map((prior) => `${prior.detail} +${Math.round(prior.boost * 100)}%`).join(", ");
}
