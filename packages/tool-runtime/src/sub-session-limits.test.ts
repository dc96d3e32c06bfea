import { describe, expect, it } from "vitest";
import { carveChildBudget, spawnRefusal } from "./sub-session-limits";

const limits = { maxDepth: 3, maxChildren: 10 };
const parent = (max: number | null, used: number, delegated = 0) => ({
  budget: { max_total_tokens: max },
  usage: { input_tokens: used, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  delegated_tokens: delegated,
});

describe("spawnRefusal", () => {
  it("allows a root session and a child below both limits", () => {
    expect(spawnRefusal({ depth: 0, childCount: 0 }, limits)).toBeNull();
    expect(spawnRefusal({ depth: 2, childCount: 9 }, limits)).toBeNull();
  });

  it("refuses at the depth limit, naming the rule /tools reports", () => {
    expect(spawnRefusal({ depth: 3, childCount: 0 }, limits)).toMatchObject({
      rule: "sub_session.max_depth:3",
    });
  });

  it("refuses at the children limit", () => {
    const refusal = spawnRefusal({ depth: 0, childCount: 10 }, limits);
    expect(refusal?.rule).toBe("sub_session.max_children:10");
    expect(refusal?.reason).toContain("spawned 10 sub-sessions");
  });
});

describe("carveChildBudget", () => {
  it("gives a child of an unlimited parent the requested limit, else the agent's, else none", () => {
    expect(carveChildBudget({ parent: parent(null, 50), requested: 1000, agentLimit: null })).toEqual({
      ok: true,
      budget: { max_total_tokens: 1000 },
    });
    expect(carveChildBudget({ parent: parent(null, 50), agentLimit: 700 })).toEqual({
      ok: true,
      budget: { max_total_tokens: 700 },
    });
    expect(carveChildBudget({ parent: parent(null, 50), agentLimit: null })).toEqual({
      ok: true,
      budget: { max_total_tokens: null },
    });
  });

  it("gives half of what a limited parent has left by default, so the parent keeps the rest", () => {
    expect(carveChildBudget({ parent: parent(1000, 400), agentLimit: null })).toEqual({
      ok: true,
      budget: { max_total_tokens: 300 },
    });
    expect(carveChildBudget({ parent: parent(1000, 401), agentLimit: 100 })).toEqual({
      ok: true,
      budget: { max_total_tokens: 100 },
    });
  });

  it("never gives more than the parent has left, counting what it gave other children", () => {
    expect(carveChildBudget({ parent: parent(1000, 400), requested: 600, agentLimit: null })).toEqual({
      ok: true,
      budget: { max_total_tokens: 600 },
    });
    expect(carveChildBudget({ parent: parent(1000, 400), requested: 200, agentLimit: 100 })).toEqual({
      ok: true,
      budget: { max_total_tokens: 100 },
    });
    const given = carveChildBudget({ parent: parent(1000, 400, 500), requested: 101, agentLimit: null });
    expect(given).toEqual({ ok: false, message: expect.stringContaining("at most 100") });
    expect(carveChildBudget({ parent: parent(1000, 400, 500), agentLimit: null })).toEqual({
      ok: true,
      budget: { max_total_tokens: 50 },
    });
  });

  it("refuses a request over what is left, and a parent with nothing left", () => {
    const over = carveChildBudget({ parent: parent(1000, 400), requested: 601, agentLimit: null });
    expect(over).toEqual({ ok: false, message: expect.stringContaining("at most 600") });
    expect(carveChildBudget({ parent: parent(1000, 1000), agentLimit: null }).ok).toBe(false);
    expect(carveChildBudget({ parent: parent(1000, 200, 800), agentLimit: null }).ok).toBe(false);
  });
});
