import { BrowserToolName, SandboxToolName, ToolDefinition } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { sandboxTools } from "./sandbox";

describe("sandbox tool definitions", () => {
  it("define every sandbox tool once, as a valid definition run by the sandbox once it is ready", () => {
    expect(sandboxTools.map((tool) => tool.name).sort()).toEqual([...SandboxToolName.options].sort());
    for (const tool of sandboxTools) {
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
});
