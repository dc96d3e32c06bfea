import type { RecalledMemory } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { estimateTokens } from "./assemble-context";
import { fitRecall, recallSectionText } from "./recall-budget";

function hit(target: string, content: string): RecalledMemory {
  return { store: "workspace_memory_notes", target, version_id: `v-${target}`, content, rank: 0.1 };
}

function cost(entry: RecalledMemory): number {
  return estimateTokens(recallSectionText(entry.store, entry.target, entry.content));
}

describe("fitRecall", () => {
  it("keeps every hit, whole and in order, when they fit", () => {
    const hits = [hit("a", "alpha note"), hit("b", "beta note")];
    const { sections, dropped } = fitRecall(hits, 1_000);
    expect(sections.map((section) => section.target)).toEqual(["a", "b"]);
    expect(sections.every((section) => !section.truncated)).toBe(true);
    expect(sections[0]?.text).toBe("### workspace_memory_notes/a\nalpha note");
    expect(sections[0]?.tokens).toBe(cost(hits[0] as RecalledMemory));
    expect(dropped).toBe(0);
  });

  it("cuts the first hit that overflows to the rest of the budget and drops the ones after it", () => {
    const hits = [hit("a", "short"), hit("b", "x".repeat(2_000)), hit("c", "small")];
    const budget = cost(hits[0] as RecalledMemory) + 100;
    const { sections, dropped } = fitRecall(hits, budget);
    expect(sections.map((section) => [section.target, section.truncated])).toEqual([
      ["a", false],
      ["b", true],
    ]);
    expect(sections[1]?.text.endsWith("…")).toBe(true);
    expect(sections.reduce((sum, section) => sum + section.tokens, 0)).toBeLessThanOrEqual(budget);
    expect(dropped).toBe(1);
  });

  it("stays within budget when escapes make the estimate exceed the length", () => {
    const { sections } = fitRecall([hit("q", '"\n'.repeat(500))], 50);
    expect(sections[0]?.truncated).toBe(true);
    expect(sections[0]?.tokens).toBeLessThanOrEqual(50);
    expect(estimateTokens(sections[0]?.text)).toBe(sections[0]?.tokens);
  });

  it("drops a hit rather than cut it to a stub, and recalls nothing with no budget", () => {
    const hits = [hit("a", "x".repeat(400))];
    expect(fitRecall(hits, 10)).toEqual({ sections: [], dropped: 1 });
    expect(fitRecall(hits, 0)).toEqual({ sections: [], dropped: 1 });
    expect(fitRecall([], 100)).toEqual({ sections: [], dropped: 0 });
  });
});
