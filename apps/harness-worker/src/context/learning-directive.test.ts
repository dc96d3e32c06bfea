import { describe, expect, it } from "vitest";
import { learningDirectives, MAX_LEARNINGS_PER_REPLY } from "./learning-directive";

describe("learningDirectives", () => {
  it("takes each <learning> block, trimmed and on one line, with a key from its text", () => {
    const found = learningDirectives(
      "Done.\n<learning>\n  The CI cache\nmust be cleared after a lockfile change.\n</learning>\n" +
        "<LEARNING>Staging needs the VPN.</LEARNING>",
    );
    expect(found.map((learning) => learning.text)).toEqual([
      "The CI cache must be cleared after a lockfile change.",
      "Staging needs the VPN.",
    ]);
    expect(found.every((learning) => /^directive:[0-9a-f]{24}$/.test(learning.key))).toBe(true);
  });

  it("gives the same lesson the same key, and skips repeats and empty blocks", () => {
    const once = learningDirectives("<learning>Staging needs the VPN.</learning>");
    const again = learningDirectives(
      "<learning>staging needs  the VPN.</learning><learning> </learning><learning>Staging needs the VPN.</learning>",
    );
    expect(again).toHaveLength(1);
    expect(again[0]?.key).toBe(once[0]?.key);
  });

  it("finds none in a reply without directives or with an unclosed one, and bounds a long list", () => {
    expect(learningDirectives("no lessons here <learning>unclosed")).toEqual([]);
    const many = Array.from({ length: 9 }, (_, index) => `<learning>lesson ${index}</learning>`).join("");
    expect(learningDirectives(many)).toHaveLength(MAX_LEARNINGS_PER_REPLY);
  });
});
