import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import TurndownService from "turndown";

export type ExtractMode = "markdown" | "text";

export interface ReadablePage {
  title: string | null;
  content: string;
}

// One converter for the process: Turndown keeps no per-document state, and building it is not free.
const turndown = new TurndownService({
  headingStyle: "atx",
  codeBlockStyle: "fenced",
  bulletListMarker: "-",
});
turndown.remove(["script", "style", "noscript", "iframe", "form"]);

/**
 * The readable part of an HTML page (Firefox Reader View's Readability), as markdown or plain text.
 * A page Readability finds no article in (a short page, an index) is converted whole, without its
 * scripts and styles, so the model still sees its text and links.
 */
export function readablePage(html: string, url: string, mode: ExtractMode): ReadablePage {
  const { document } = parseHTML(html);
  const pageTitle = document.title?.trim() || null;
  // Readability mutates the document it reads, so it gets its own parse.
  const article = new Readability(
    parseHTML(html).document as unknown as ConstructorParameters<typeof Readability>[0],
    {
      charThreshold: 200,
    },
  ).parse();
  const body = article?.content ?? document.body?.innerHTML ?? html;
  const title = article?.title?.trim() || pageTitle;
  const content = mode === "markdown" ? turndown.turndown(absoluteLinks(body, url)) : textOf(body);
  return { title, content: content.trim() };
}

/** Links and images relative to the page would mean nothing to the model once out of it. */
function absoluteLinks(html: string, base: string): string {
  const { document } = parseHTML(`<!doctype html><html><body>${html}</body></html>`);
  for (const [selector, attribute] of [
    ["a[href]", "href"],
    ["img[src]", "src"],
  ] as const) {
    for (const element of document.querySelectorAll(selector)) {
      const value = element.getAttribute(attribute);
      if (value === null) continue;
      try {
        element.setAttribute(attribute, new URL(value, base).href);
      } catch {
        element.removeAttribute(attribute);
      }
    }
  }
  return document.body.innerHTML;
}

function textOf(html: string): string {
  const { document } = parseHTML(`<!doctype html><html><body>${html}</body></html>`);
  for (const element of document.querySelectorAll("script, style, noscript")) element.remove();
  const text: string = document.body.textContent ?? "";
  return text
    .split("\n")
    .map((line) => line.replace(/[ \t]+/g, " ").trim())
    .filter((line, index, lines) => line.length > 0 || (lines[index - 1] ?? "").length > 0)
    .join("\n");
}
