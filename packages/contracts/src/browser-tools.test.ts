import { describe, expect, it } from "vitest";
import {
  BrowserEvaluateInput,
  BrowserExtractHtmlInput,
  BrowserInput,
  BrowserNavigateInput,
  BrowserScreenshotInput,
  BrowserTypeInput,
} from "./browser-tools";
import { sandboxToolInputs } from "./sandbox-tools";

describe("browser tool inputs", () => {
  it("take http(s) URLs and about:blank only, with the reference's defaults", () => {
    expect(BrowserNavigateInput.parse({ url: "https://example.com/a?b=1" })).toEqual({
      url: "https://example.com/a?b=1",
      wait_until: "load",
    });
    expect(BrowserNavigateInput.safeParse({ url: "about:blank" }).success).toBe(true);
    for (const url of [
      "file:///etc/passwd",
      "javascript:alert(1)",
      "chrome://settings",
      "example.com",
      "http://",
    ]) {
      const parsed = BrowserNavigateInput.safeParse({ url });
      expect(parsed.success, url).toBe(false);
      expect(parsed.error?.issues[0]?.message, url).toBe(
        "an absolute http:// or https:// URL (or about:blank)",
      );
    }
    expect(BrowserNavigateInput.safeParse({ url: "https://a.example", wait_until: "idle" }).success).toBe(
      false,
    );
  });

  it("fill the reference's defaults and refuse unknown or mistyped fields", () => {
    expect(BrowserScreenshotInput.parse({})).toEqual({ full_page: false });
    expect(BrowserExtractHtmlInput.parse({})).toEqual({ selector: "body", outer: false });
    expect(BrowserTypeInput.parse({ selector: "#q", text: "hi" })).toEqual({
      selector: "#q",
      text: "hi",
      clear_first: false,
    });
    expect(BrowserTypeInput.safeParse({ selector: "#q" }).success).toBe(false);
    expect(BrowserScreenshotInput.safeParse({ full_page: "yes" }).success).toBe(false);
    expect(BrowserEvaluateInput.safeParse({ code: "" }).success).toBe(false);
    expect(BrowserEvaluateInput.safeParse({ code: "1", timeout: 5 }).success).toBe(false);
  });

  it("OpenClaw's browser names one action and leaves its arguments to that action's tool", () => {
    expect(BrowserInput.parse({ action: "click", selector: "#go" })).toEqual({
      action: "click",
      selector: "#go",
    });
    expect(BrowserInput.safeParse({ action: "scroll" }).success).toBe(false);
    expect(BrowserInput.safeParse({ selector: "#go" }).success).toBe(false);
  });

  it("are sandbox tools, so the runner validates them like every other sandbox call", () => {
    expect(Object.keys(sandboxToolInputs)).toEqual(
      expect.arrayContaining(["browser_navigate", "browser_screenshot", "browser_close"]),
    );
  });
});
