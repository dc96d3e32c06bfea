import {
  BROWSER_ACTIONS,
  type BrowserClickInput,
  type BrowserEvaluateInput,
  type BrowserExtractHtmlInput,
  type BrowserExtractTextInput,
  type BrowserInput,
  type BrowserNavigateInput,
  type BrowserScreenshotInput,
  type BrowserTypeInput,
  type ImageBlock,
  type SandboxToolName,
  WakeloopError,
} from "@wakeloop/contracts";
import { errors, type Locator, type Page } from "playwright-core";
import { failure, ok, type ToolOutcome } from "./output-format";
import type { ToolContext } from "./tool-context";

/** How long one browser action (a load, finding an element, a script) may take. */
export const BROWSER_ACTION_TIMEOUT_MS = 30_000;
/** Text and HTML handed back to the model, like a finished command's output. */
export const BROWSER_OUTPUT_CHARS = 100_000;
/**
 * A screenshot travels in the runner's reply and in a committed event: past this many base64
 * characters a PNG is sent as JPEG, and past it as JPEG too the call fails with what to do instead.
 */
export const SCREENSHOT_MAX_BASE64 = 700_000;

export async function browserNavigateTool(ctx: ToolContext, input: BrowserNavigateInput) {
  return browserCall(ctx, async (page) => {
    const response = await page
      .goto(input.url, { waitUntil: input.wait_until, timeout: BROWSER_ACTION_TIMEOUT_MS })
      .catch(async (error: Error) => {
        // Chromium commits its error page after a failed load; waiting for it here keeps it from
        // cutting off the next call's navigation.
        await page.waitForURL(/^chrome-error:/, { timeout: 5_000 }).catch(() => undefined);
        throw error;
      });
    const view = { url: page.url(), title: await page.title(), status: response?.status() ?? null };
    return ok(JSON.stringify(view), view);
  });
}

export async function browserClickTool(ctx: ToolContext, input: BrowserClickInput) {
  return browserCall(ctx, async (page) => {
    await element(page, input.selector).click({ timeout: BROWSER_ACTION_TIMEOUT_MS });
    const view = { ok: true, url: page.url(), title: await page.title() };
    return ok(JSON.stringify(view), view);
  });
}

export async function browserTypeTool(ctx: ToolContext, input: BrowserTypeInput) {
  return browserCall(ctx, async (page) => {
    const target = element(page, input.selector);
    if (input.clear_first) await target.fill("", { timeout: BROWSER_ACTION_TIMEOUT_MS });
    await target.pressSequentially(input.text, { timeout: BROWSER_ACTION_TIMEOUT_MS });
    return ok(JSON.stringify({ ok: true }), { ok: true, typed_chars: input.text.length });
  });
}

export async function browserExtractTextTool(ctx: ToolContext, input: BrowserExtractTextInput) {
  return browserCall(ctx, async (page) => {
    // biome-ignore lint/performance/useDomNodeTextContent: the visible text (CSS applied) is what a reader sees
    const text = await element(page, input.selector ?? "body").innerText({
      timeout: BROWSER_ACTION_TIMEOUT_MS,
    });
    return pageOutput("text", text);
  });
}

export async function browserExtractHtmlTool(ctx: ToolContext, input: BrowserExtractHtmlInput) {
  return browserCall(ctx, async (page) => {
    const target = element(page, input.selector);
    const html = input.outer
      ? await target.evaluate((node) => node.outerHTML, undefined, { timeout: BROWSER_ACTION_TIMEOUT_MS })
      : await target.innerHTML({ timeout: BROWSER_ACTION_TIMEOUT_MS });
    return pageOutput("html", html);
  });
}

export async function browserEvaluateTool(ctx: ToolContext, input: BrowserEvaluateInput) {
  return browserCall(ctx, async (page) => {
    // A string is evaluated as an expression over CDP (so a page's CSP does not block it); when that
    // expression is a function, as in the reference's examples, it is called and its promise awaited.
    const value: unknown = await withTimeout(
      ctx,
      page.evaluateHandle(input.code).then(async (handle) => {
        try {
          return await handle.evaluate((v: unknown) => (typeof v === "function" ? v() : v));
        } finally {
          void handle.dispose().catch(() => undefined);
        }
      }),
    );
    const json = JSON.stringify(value ?? null) ?? "null";
    if (json.length > BROWSER_OUTPUT_CHARS) {
      return failure(
        "browser_result_too_large",
        `the script's result is ${json.length} characters of JSON, over ${BROWSER_OUTPUT_CHARS}; return less`,
      );
    }
    return ok(`{"result":${json}}`, { result_chars: json.length });
  });
}

export async function browserScreenshotTool(ctx: ToolContext, input: BrowserScreenshotInput) {
  return browserCall(ctx, async (page) => {
    const take = (options: { type: "png" } | { type: "jpeg"; quality: number }) =>
      input.selector === undefined
        ? page.screenshot({ ...options, fullPage: input.full_page, timeout: BROWSER_ACTION_TIMEOUT_MS })
        : element(page, input.selector).screenshot({ ...options, timeout: BROWSER_ACTION_TIMEOUT_MS });
    const png = await take({ type: "png" });
    const size = pngSize(png);
    let image = { media_type: "image/png" as const, data: png.toString("base64") } as {
      media_type: "image/png" | "image/jpeg";
      data: string;
    };
    for (const quality of [80, 50]) {
      if (image.data.length <= SCREENSHOT_MAX_BASE64) break;
      image = { media_type: "image/jpeg", data: (await take({ type: "jpeg", quality })).toString("base64") };
    }
    if (image.data.length > SCREENSHOT_MAX_BASE64) {
      return failure(
        "screenshot_too_large",
        `the screenshot (${size.width}x${size.height}) is too large to return even as JPEG; capture the ` +
          "viewport (full_page: false) or one element (selector)",
      );
    }
    const details = { ...size, media_type: image.media_type, bytes: Math.floor((image.data.length * 3) / 4) };
    const block: ImageBlock = { type: "image", source: { type: "base64", ...image } };
    return { ...ok(JSON.stringify(details), details), images: [block] };
  });
}

export async function browserCloseTool(ctx: ToolContext) {
  const closed = await ctx.browser.close();
  return ok(JSON.stringify({ ok: true, closed }), { ok: true, closed });
}

/** OpenClaw's `browser`: the action's own tool, on the arguments given beside it (checked by that tool). */
export function browserActionTool(
  input: BrowserInput,
  runTool: (tool: SandboxToolName, input: unknown) => Promise<ToolOutcome>,
): Promise<ToolOutcome> {
  const { action, ...args } = input;
  return runTool(BROWSER_ACTIONS[action], args);
}

/** The first element the selector matches: the reference's tools act on one element. */
function element(page: Page, selector: string): Locator {
  return page.locator(selector).first();
}

function pageOutput(field: "text" | "html", value: string): ToolOutcome {
  const truncated = value.length > BROWSER_OUTPUT_CHARS;
  const shown = truncated ? value.slice(0, BROWSER_OUTPUT_CHARS) : value;
  const notice = truncated
    ? `\n[truncated: showing ${BROWSER_OUTPUT_CHARS} of ${value.length} characters; narrow it with a selector]`
    : "";
  return ok(`${shown}${notice}`, { [`${field}_chars`]: value.length, truncated });
}

/**
 * One call on the session's page. An interrupt stops a running script or load in the page (the call
 * then answers `interrupted`); what Playwright refuses (no element, a timeout, a failed load, a script
 * that threw) is an error result the model can act on; the browser failing to start is one too.
 */
async function browserCall(
  ctx: ToolContext,
  run: (page: Page) => Promise<ToolOutcome>,
): Promise<ToolOutcome> {
  if (ctx.signal.aborted) return interrupted();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<ToolOutcome>((resolve) => {
    onAbort = () => {
      void ctx.browser.interrupt().catch(() => undefined);
      resolve(interrupted());
    };
    ctx.signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([ctx.browser.page().then(run), aborted]);
  } catch (error) {
    if (ctx.signal.aborted) return interrupted();
    if (error instanceof WakeloopError) return failure(error.code, error.message);
    if (error instanceof errors.TimeoutError) return failure("browser_timeout", firstLines(error.message));
    if (error instanceof Error) return failure("browser_error", firstLines(error.message));
    throw error;
  } finally {
    if (onAbort) ctx.signal.removeEventListener("abort", onAbort);
  }
}

function interrupted(): ToolOutcome {
  return failure(
    "interrupted",
    "the browser call was interrupted; a running script or page load was stopped",
  );
}

/** page.evaluate takes no timeout: a script that never ends is stopped in the page after the limit. */
async function withTimeout<T>(ctx: ToolContext, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void ctx.browser.interrupt().catch(() => undefined);
      reject(
        new WakeloopError(
          "browser_timeout",
          `the script ran past ${BROWSER_ACTION_TIMEOUT_MS} ms and was stopped`,
        ),
      );
    }, BROWSER_ACTION_TIMEOUT_MS);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** Playwright's messages carry a call log after the first lines; the model needs the gist. */
function firstLines(message: string): string {
  return message.split("\n").slice(0, 3).join("\n").slice(0, 2_000);
}

/** Width and height from a PNG's IHDR chunk. */
function pngSize(png: Buffer): { width: number; height: number } {
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}
