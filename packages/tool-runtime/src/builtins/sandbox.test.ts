import { BrowserToolName, SandboxToolName, ToolDefinition } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { resourceTools } from "./resources";
import { sandboxTools } from "./sandbox";

describe("sandbox tool definitions", () => {
  it("define every sandbox tool once, as a valid definition run by the sandbox once it is ready", () => {
    const all = [...sandboxTools, ...resourceTools];
    expect(all.map((tool) => tool.name).sort()).toEqual([...SandboxToolName.options].sort());
    for (const tool of all) {
      expect(ToolDefinition.safeParse(tool).error?.issues ?? [], tool.name).toEqual([]);
      expect(tool).toMatchObject({
        executor: "sandbox",
        availability: tool.group === "browser" ? ["sandbox.ready", "sandbox.browser"] : ["sandbox.ready"],
        ownership: "managed",
      });
      expect(tool.inputSchema.type, tool.name).toBe("object");
    }
  });

  it("asks before the writable shells run and lets the inspection hand run", () => {
    const policy = Object.fromEntries(sandboxTools.map((tool) => [tool.name, tool.permissionPolicy]));
    expect(policy).toMatchObject({
      shell_run: "always_ask",
      shell_exec: "always_ask",
      bash: "always_allow",
      read: "always_allow",
    });
  });

  it("offers the browser family on browser images only, in one serial lane, without asking by default", () => {
    const browser = sandboxTools.filter((tool) => tool.group === "browser");
    expect(browser.map((tool) => tool.name).sort()).toEqual([...BrowserToolName.options].sort());
    for (const tool of browser) {
      expect(tool.permissionPolicy, tool.name).toBe("always_allow");
      expect(tool.parallelism.resourceKey, tool.name).toBe("browser");
    }
    const readOnly = Object.fromEntries(browser.map((tool) => [tool.name, tool.readOnly]));
    expect(readOnly).toMatchObject({
      browser_navigate: true,
      browser_extract_text: true,
      browser_extract_html: true,
      browser_screenshot: true,
      browser_click: false,
      browser_type: false,
      browser_evaluate: false,
    });
  });

  it("put the resources tools in their own family: promotion asks, every write is keyed by its path", () => {
    const byName = new Map(resourceTools.map((tool) => [tool.name, tool]));
    expect(resourceTools.every((tool) => tool.group === "resources" && tool.idempotent)).toBe(true);
    expect(
      resourceTools.filter((tool) => tool.permissionPolicy === "always_ask").map((tool) => tool.name),
    ).toEqual(["resources_promote_to_substrate"]);
    expect(byName.get("resources_promote_to_substrate")).toMatchObject({
      readOnly: false,
      parallelism: { parallelSafe: false, resourceKey: "substrate:{path}" },
    });
    expect(byName.get("resources_compare_with_substrate")).toMatchObject({
      readOnly: true,
      parallelism: { parallelSafe: true },
    });
    // The reference's names for the optimistic preconditions.
    expect(Object.keys(byName.get("resources_promote_to_substrate")?.inputSchema.properties ?? {})).toEqual([
      "path",
      "workspacePath",
      "expectedVersionId",
      "expectedContentHash",
    ]);
  });
});
