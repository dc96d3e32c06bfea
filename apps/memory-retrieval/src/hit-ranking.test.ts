import { describe, expect, it } from "vitest";
import {
  cosineSimilarity,
  describePriors,
  type HitOrigin,
  outcomeMatch,
  rankCandidates,
  rankingPriors,
  reciprocalRankFusion,
  relationOf,
} from "./hit-ranking";

const current: HitOrigin = {
  sessionId: "s_current",
  parentSessionId: "s_parent",
  setupFingerprint: "fp_now",
  outcome: { title: "Ship the billing export", criteria: ["export runs nightly", "CSV has headers"] },
};
const origin = (patch: Partial<HitOrigin> = {}): HitOrigin => ({
  sessionId: "s_other",
  parentSessionId: null,
  setupFingerprint: "fp_old",
  outcome: null,
  ...patch,
});

describe("reciprocalRankFusion", () => {
  it("adds 1/(k + rank) per list, so agreement between lists beats one list's top rank", () => {
    const scores = reciprocalRankFusion([
      ["a", "b", "c"],
      ["c", "b"],
    ]);
    expect(scores.get("a")).toBeCloseTo(1 / 61, 12);
    expect(scores.get("b")).toBeCloseTo(1 / 62 + 1 / 62, 12);
    expect(scores.get("c")).toBeCloseTo(1 / 63 + 1 / 61, 12);
    const order = [...scores.entries()].sort((x, y) => y[1] - x[1]).map(([key]) => key);
    expect(order).toEqual(["c", "b", "a"]);
  });

  it("keeps one list's order and takes k", () => {
    const scores = reciprocalRankFusion([["x", "y"]], 1);
    expect(scores.get("x")).toBe(1 / 2);
    expect(scores.get("y")).toBe(1 / 3);
    expect(reciprocalRankFusion([]).size).toBe(0);
  });
});

describe("cosineSimilarity", () => {
  it("is 1 for the same direction, 0 for orthogonal, zero vectors or mismatched sizes", () => {
    expect(cosineSimilarity(Float32Array.of(1, 2, 3), Float32Array.of(2, 4, 6))).toBeCloseTo(1, 6);
    expect(cosineSimilarity(Float32Array.of(1, 0), Float32Array.of(0, 5))).toBe(0);
    expect(cosineSimilarity(Float32Array.of(0, 0), Float32Array.of(1, 1))).toBe(0);
    expect(cosineSimilarity(Float32Array.of(1, 0), Float32Array.of(1, 0, 0))).toBe(0);
    expect(cosineSimilarity(Float32Array.of(1, 0), Float32Array.of(-1, 0))).toBeCloseTo(-1, 6);
  });
});

describe("priors", () => {
  it("names the relation of a hit's session to the current one", () => {
    expect(relationOf(current, origin({ sessionId: "s_current" }))).toBe("self");
    expect(relationOf(current, origin({ sessionId: "s_parent" }))).toBe("parent");
    expect(relationOf(current, origin({ parentSessionId: "s_current" }))).toBe("child");
    expect(relationOf(current, origin({ parentSessionId: "s_parent" }))).toBe("sibling");
    expect(relationOf(current, origin())).toBe("same_agent");
    expect(relationOf({ ...current, parentSessionId: null }, origin())).toBe("same_agent");
  });

  it("matches outcomes by title (case and spacing aside) or shared criteria", () => {
    const mine = current.outcome ?? { title: "", criteria: [] };
    expect(outcomeMatch(mine, { title: "  ship the   BILLING export", criteria: [] })).toBe(
      "same outcome title",
    );
    expect(outcomeMatch(mine, { title: "Other", criteria: ["csv has headers", "fast"] })).toBe(
      "1 shared success criterion",
    );
    expect(outcomeMatch(mine, { title: "Other", criteria: ["Export runs nightly", "CSV has headers"] })).toBe(
      "2 shared success criteria",
    );
    expect(outcomeMatch(mine, { title: "Other", criteria: ["fast"] })).toBeNull();
  });

  it("applies setup, outcome and relation in that order, each with its boost", () => {
    const all = rankingPriors(
      current,
      origin({
        setupFingerprint: "fp_now",
        outcome: { title: "ship the billing export", criteria: [] },
        sessionId: "s_parent",
      }),
    );
    expect(all).toEqual([
      { prior: "same_setup", boost: 0.2, detail: "same agent setup fp_now" },
      { prior: "same_outcome", boost: 0.15, detail: "same outcome title" },
      { prior: "relation", boost: 0.1, detail: "parent session" },
    ]);
    expect(describePriors(all)).toBe(
      "same agent setup fp_now +20%, same outcome title +15%, parent session +10%",
    );
    expect(rankingPriors(current, origin())).toEqual([]);
    expect(rankingPriors(current, null)).toEqual([]);
    // No outcome on either side: no outcome prior.
    expect(rankingPriors({ ...current, outcome: null }, origin({ outcome: current.outcome }))).toEqual([]);
    expect(rankingPriors(current, origin({ parentSessionId: "s_parent" }))).toEqual([
      { prior: "relation", boost: 0.05, detail: "sibling session" },
    ]);
  });
});

describe("rankCandidates", () => {
  const candidates = [
    { key: "event:a", hit: "a", origin: origin() },
    { key: "event:b", hit: "b", origin: origin({ setupFingerprint: "fp_now" }) },
    { key: "memory:c", hit: "c", origin: null },
  ];

  it("with one list and no priors keeps the list's order", () => {
    const ranked = rankCandidates(
      candidates.map((candidate) => ({ ...candidate, origin: null })),
      { full_text: ["memory:c", "event:a", "event:b"] },
      current,
    );
    expect(ranked.map((hit) => hit.hit)).toEqual(["c", "a", "b"]);
    expect(ranked[0]).toMatchObject({ ranks: [{ list: "full_text", rank: 1 }], priors: [], fused: 1 / 61 });
  });

  it("lets a mild prior reorder neighbours but not overturn a much better match", () => {
    // b is one rank behind a: the same-setup prior (+20%) lifts it above.
    const near = rankCandidates(candidates, { full_text: ["event:a", "event:b", "memory:c"] }, current);
    expect(near.map((hit) => hit.hit)).toEqual(["b", "a", "c"]);
    expect(near[0]?.score).toBeCloseTo((1 / 62) * 1.2, 12);
    // a is ranked first by both lists, b last by one: fusion beats the prior.
    const far = rankCandidates(
      candidates,
      { full_text: ["event:a", "memory:c", "event:b"], semantic: ["event:a", "memory:c"] },
      current,
    );
    expect(far.map((hit) => hit.hit)).toEqual(["a", "c", "b"]);
    expect(far[0]?.ranks).toEqual([
      { list: "full_text", rank: 1 },
      { list: "semantic", rank: 1 },
    ]);
  });

  it("finds a candidate only one list ranked, and breaks exact ties by key", () => {
    const ranked = rankCandidates(
      [
        { key: "event:z", hit: "z", origin: null },
        { key: "event:y", hit: "y", origin: null },
      ],
      { full_text: ["event:z"], semantic: ["event:y"] },
      current,
    );
    expect(ranked.map((hit) => hit.hit)).toEqual(["y", "z"]);
    expect(ranked.map((hit) => hit.ranks[0]?.list)).toEqual(["semantic", "full_text"]);
  });
});
