import { describe, expect, it } from "vitest";
import {
  ResourcePath,
  ResourcesPromoteInput,
  ResourcesRestoreVersionInput,
  RestoreResourceRequest,
} from "./resources";

describe("resource inputs", () => {
  it("takes substrate paths relative to /workspace/agent, or under it", () => {
    expect(ResourcePath.parse("guide.md")).toBe("guide.md");
    expect(ResourcePath.parse("docs/v2/guide.md")).toBe("docs/v2/guide.md");
    expect(ResourcePath.parse("/workspace/agent/docs/guide.md")).toBe("docs/guide.md");
    expect(ResourcePath.parse("  notes_1-final.txt ")).toBe("notes_1-final.txt");
  });

  it.each([
    ["", "empty"],
    ["../etc/passwd", "a parent step"],
    ["docs/../../x", "a parent step inside"],
    ["/etc/passwd", "an absolute path outside the substrate"],
    ["/workspace/other.md", "a workspace path that is not the substrate"],
    [".env", "a hidden file"],
    ["docs/.git/config", "a hidden directory"],
    ["-rf", "an option-like name"],
    ["docs//guide.md", "an empty segment"],
    ["docs/", "a trailing slash"],
    ["a b.md", "a space"],
    ["a/b/c/d/e/f/g/h/i.md", "more than 8 segments"],
    [`${"x".repeat(101)}.md`, "a segment over 100 characters"],
  ])("refuses %j (%s) with a message saying what a path is", (path) => {
    const parsed = ResourcePath.safeParse(path);
    expect(parsed.success).toBe(false);
    if (path !== "") expect(parsed.error?.issues[0]?.message).toContain("relative to /workspace/agent");
  });

  it("checks the optimistic preconditions' shapes", () => {
    expect(ResourcesPromoteInput.safeParse({ path: "a.md", expectedContentHash: "sha256:abc" }).success).toBe(
      false,
    );
    expect(
      ResourcesPromoteInput.parse({ path: "a.md", expectedContentHash: `sha256:${"0".repeat(64)}` }),
    ).toEqual({ path: "a.md", expectedContentHash: `sha256:${"0".repeat(64)}` });
    expect(ResourcesRestoreVersionInput.safeParse({}).success).toBe(false);
    expect(RestoreResourceRequest.safeParse({ version_id: "subv_1", extra: true }).success).toBe(false);
  });
});
