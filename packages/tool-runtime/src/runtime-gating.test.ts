import type { ToolDefinition } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { customToolDefinition } from "./registry";
import { applyRuntimeGating } from "./runtime-gating";

const base = customToolDefinition({
  type: "custom",
  name: "x",
  description: "x",
  input_schema: { type: "object" },
});
const tool = (name: string, availability: ToolDefinition["availability"]): ToolDefinition => ({
  ...base,
  name,
  availability,
});
const tools = [
  tool("always", []),
  tool("sandboxed", ["sandbox.ready"]),
  tool("child_only", ["session.is_child"]),
  tool("root_only", ["session.is_root"]),
  tool("remembers", ["memory.ready"]),
  tool("searches", ["web.search"]),
];

describe("applyRuntimeGating", () => {
  it("keeps tools whose facts hold", () => {
    const result = applyRuntimeGating(tools, {
      sandboxStatus: "ready",
      memoryReady: true,
      webSearch: true,
      subSessionDepth: 0,
    });
    expect(result.tools.map((t) => t.name)).toEqual([
      "always",
      "sandboxed",
      "root_only",
      "remembers",
      "searches",
    ]);
    expect(result.excluded).toEqual([
      {
        tool: "child_only",
        step: "runtime_gating",
        rule: "availability:session.is_child",
        reason: "needs session.is_child; this is a root session",
      },
    ]);
  });

  it.each([
    [null, "needs sandbox.ready; the session has no sandbox yet"],
    ["provisioning", "needs sandbox.ready; the sandbox is provisioning"],
    ["closed", "needs sandbox.ready; the sandbox is closed"],
    ["error", "needs sandbox.ready; the sandbox failed"],
  ] as const)("sandbox %s → sandbox tools gated with a reason", (status, reason) => {
    const result = applyRuntimeGating(tools, {
      sandboxStatus: status,
      memoryReady: false,
      webSearch: false,
      subSessionDepth: 1,
    });
    expect(result.tools.map((t) => t.name)).toEqual(["always", "child_only"]);
    expect(result.excluded.find((e) => e.tool === "sandboxed")?.reason).toBe(reason);
    expect(result.excluded.find((e) => e.tool === "root_only")?.reason).toBe(
      "needs session.is_root; this is a sub-session (depth 1)",
    );
    expect(result.excluded.find((e) => e.tool === "remembers")?.reason).toBe(
      "needs memory.ready; the memory service is not ready",
    );
    expect(result.excluded.find((e) => e.tool === "searches")?.reason).toBe(
      "needs web.search; the operator configured no search backend (WEB_SEARCH_URL)",
    );
  });
});
