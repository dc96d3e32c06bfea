import { MAX_JSON_DEPTH } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { mcpResultContent } from "./mcp-content";

describe("mcpResultContent", () => {
  it("shows structured content without blocks as JSON", () => {
    expect(mcpResultContent([], { rows: [1, 2] })).toEqual([{ type: "text", text: '{"rows":[1,2]}' }]);
  });

  it("leaves out structured content nested past MAX_JSON_DEPTH instead of throwing on it", () => {
    const levels = 10_000;
    const deep = JSON.parse("[".repeat(levels) + "]".repeat(levels));
    const [block] = mcpResultContent([], { deep });
    expect(block).toMatchObject({
      type: "text",
      text: expect.stringContaining(`deeper than ${MAX_JSON_DEPTH} levels`),
    });
  });
});
