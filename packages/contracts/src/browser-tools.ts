import { z } from "zod";

// Inputs of the browser tools (personal-agent "Browser": one headless Chromium per session, driven by
// Playwright). They run on the session's sandbox like the other sandbox tools: the runner drives the
// Chromium of the sandbox image's browser variant (infra/sandbox-image.sh browser), whose network is
// the sandbox's own. docs/browser-tools.md says where each piece runs and why.

const Selector = z.string().min(1).max(2_000);

export const BrowserNavigateInput = z.strictObject({
  url: z
    .string()
    .min(1)
    .max(8_192)
    .refine((url) => /^(https?:\/\/|about:blank$)/i.test(url) && URL.canParse(url), {
      message: "an absolute http:// or https:// URL (or about:blank)",
    })
    .describe("URL to navigate to (http:// or https://); it is reached from the sandbox's own network"),
  wait_until: z
    .enum(["load", "domcontentloaded", "networkidle"])
    .default("load")
    .describe("When to consider navigation complete. Default: load."),
});
export type BrowserNavigateInput = z.infer<typeof BrowserNavigateInput>;

export const BrowserScreenshotInput = z.strictObject({
  selector: Selector.optional().describe(
    "CSS selector to screenshot a specific element. If omitted, captures the full viewport.",
  ),
  full_page: z.boolean().default(false).describe("Capture the entire scrollable page. Default: false."),
});
export type BrowserScreenshotInput = z.infer<typeof BrowserScreenshotInput>;

export const BrowserClickInput = z.strictObject({
  selector: Selector.describe("CSS selector of the element to click"),
});
export type BrowserClickInput = z.infer<typeof BrowserClickInput>;

export const BrowserTypeInput = z.strictObject({
  selector: Selector.describe("CSS selector of the input element"),
  text: z.string().max(100_000).describe("Text to type"),
  clear_first: z.boolean().default(false).describe("Clear existing content before typing. Default: false."),
});
export type BrowserTypeInput = z.infer<typeof BrowserTypeInput>;

export const BrowserExtractTextInput = z.strictObject({
  selector: Selector.optional().describe(
    "CSS selector to extract from. If omitted, extracts from the entire page body.",
  ),
});
export type BrowserExtractTextInput = z.infer<typeof BrowserExtractTextInput>;

export const BrowserExtractHtmlInput = z.strictObject({
  selector: Selector.default("body").describe("CSS selector. Defaults to body."),
  outer: z
    .boolean()
    .default(false)
    .describe("Include the element's own tag. Default: false (innerHTML only)."),
});
export type BrowserExtractHtmlInput = z.infer<typeof BrowserExtractHtmlInput>;

export const BrowserEvaluateInput = z.strictObject({
  code: z
    .string()
    .min(1)
    .max(100_000)
    .describe(
      "JavaScript evaluated in the page context: an expression such as document.title, or a function such " +
        "as () => [...document.links].map((a) => a.href), which is called. The return value is serialized " +
        "as JSON; a returned promise is awaited.",
    ),
});
export type BrowserEvaluateInput = z.infer<typeof BrowserEvaluateInput>;

export const BrowserCloseInput = z.strictObject({});
export type BrowserCloseInput = z.infer<typeof BrowserCloseInput>;

/** The actions of OpenClaw's single `browser` tool, each one of the tools above. */
export const BROWSER_ACTIONS = {
  navigate: "browser_navigate",
  screenshot: "browser_screenshot",
  click: "browser_click",
  type: "browser_type",
  extract_text: "browser_extract_text",
  extract_html: "browser_extract_html",
  evaluate: "browser_evaluate",
  close: "browser_close",
} as const;
export type BrowserAction = keyof typeof BROWSER_ACTIONS;

/**
 * OpenClaw's `browser`: one tool, the action named, its arguments beside it (one flat object: providers
 * want an object at the top level). The runner checks the arguments against the action's own tool.
 */
export const BrowserInput = z.object({
  action: z
    .enum(Object.keys(BROWSER_ACTIONS) as [BrowserAction, ...BrowserAction[]])
    .describe("What to do; the other fields are that action's arguments (see the browser_* tools)"),
  url: z.string().optional().describe("navigate: the URL"),
  wait_until: z.string().optional().describe("navigate: load (default), domcontentloaded or networkidle"),
  selector: z
    .string()
    .optional()
    .describe("screenshot, click, type, extract_text, extract_html: CSS selector"),
  full_page: z.boolean().optional().describe("screenshot: the whole scrollable page"),
  text: z.string().optional().describe("type: the text"),
  clear_first: z.boolean().optional().describe("type: empty the field first"),
  outer: z.boolean().optional().describe("extract_html: include the element's own tag"),
  code: z.string().optional().describe("evaluate: the JavaScript"),
});
export type BrowserInput = z.infer<typeof BrowserInput>;

/** Every browser tool and the schema its input must satisfy (a part of `sandboxToolInputs`). */
export const browserToolInputs = {
  browser_navigate: BrowserNavigateInput,
  browser_screenshot: BrowserScreenshotInput,
  browser_click: BrowserClickInput,
  browser_type: BrowserTypeInput,
  browser_extract_text: BrowserExtractTextInput,
  browser_extract_html: BrowserExtractHtmlInput,
  browser_evaluate: BrowserEvaluateInput,
  browser_close: BrowserCloseInput,
  browser: BrowserInput,
} as const;

export type BrowserToolName = keyof typeof browserToolInputs;
export const BrowserToolName = z.enum(
  Object.keys(browserToolInputs) as [BrowserToolName, ...BrowserToolName[]],
);
