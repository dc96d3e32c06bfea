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
      sandboxImage: { name: "wakeloop-sandbox:bookworm", browser: false },
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
      sandboxImage: null,
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

  it.each([
    [{ name: "wakeloop-sandbox-browser:bookworm", browser: true }, null],
    [
      { name: "wakeloop-sandbox:bookworm", browser: false },
      "needs sandbox.browser; the environment's image wakeloop-sandbox:bookworm has no browser; set " +
        "environment.config.image to a browser image (SANDBOX_BROWSER_IMAGES, e.g. wakeloop-sandbox-browser:bookworm)",
    ],
    [null, "needs sandbox.browser; the session has no environment, so no sandbox image"],
  ] as const)("a browser tool on image %j → offered or gated with a reason", (image, reason) => {
    const browsing = tool("browses", ["sandbox.ready", "sandbox.browser"]);
    const result = applyRuntimeGating([browsing], {
      sandboxStatus: "ready",
      memoryReady: true,
      webSearch: true,
      sandboxImage: image,
      subSessionDepth: 0,
    });
    expect(result.tools.map((t) => t.name)).toEqual(reason === null ? ["browses"] : []);
    expect(result.excluded.map((e) => e.reason)).toEqual(reason === null ? [] : [reason]);
  });
});
