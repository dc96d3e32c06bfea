import type { ToolDefinition } from "@wakeloop/contracts";
import { z } from "zod";
import { managedTool } from "./define";

// The web family (OpenClaw `web_fetch`/`web_search`, personal-agent `fetch_url`/`web_search`/`web_read`),
// run by the worker's `web` executor through the egress guard. Reads only: GET requests, no request
// headers or bodies from the model, so they are always_allow like OpenClaw's; an operator who counts
// every outbound request as an effect sets `always_ask` for `group:web` in a policy.

const Url = z.string().min(1).max(8_192).describe("Absolute http:// or https:// URL");
const MaxChars = z
  .number()
  .int()
  .min(100)
  .max(100_000)
  .optional()
  .describe(
    "Most characters of content to return (the platform's limit caps it); the rest is cut with a notice",
  );

export const WebFetchInput = z.strictObject({
  url: Url.describe("The URL to fetch"),
  extract_mode: z
    .enum(["markdown", "text"])
    .default("markdown")
    .describe(
      "How an HTML page's readable part is returned. Default: markdown. JSON and text come as they are.",
    ),
  max_chars: MaxChars,
});
export type WebFetchInput = z.infer<typeof WebFetchInput>;

export const WebReadInput = z.strictObject({ url: Url.describe("The page to read"), max_chars: MaxChars });
export type WebReadInput = z.infer<typeof WebReadInput>;

export const WebSearchInput = z.strictObject({
  query: z.string().min(1).max(500).describe("What to search for"),
  count: z.number().int().min(1).max(10).default(5).describe("Results to return, 1-10. Default: 5."),
  language: z
    .string()
    .regex(/^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})?$/, "a language tag such as en or de-CH")
    .optional()
    .describe("Language tag of the results wanted, e.g. en or de-CH"),
  time_range: z
    .enum(["day", "month", "year"])
    .optional()
    .describe("Only results from the last day, month or year"),
});
export type WebSearchInput = z.infer<typeof WebSearchInput>;

export const WEB_FETCH_TOOLS = ["web_fetch", "fetch_url", "web_read"] as const;

const common = {
  permissionPolicy: "always_allow",
  effects: ["network", "read"] as ToolDefinition["effects"],
  destructive: false,
  idempotent: true,
  interruptBehavior: "cancel",
  group: "web",
  executor: "web",
  parallelism: { parallelSafe: true },
} as const;

const FETCH_RETURNS =
  "Returns { url, final_url, status, content_type, title, content, truncated, total_chars }. Only public " +
  "addresses are reachable (private, loopback and link-local ones are refused, also after a redirect); " +
  "binary content (images, PDFs, archives) is refused.";

const fetchDescription =
  "Fetch a URL with GET and return its content for reading: an HTML page as the markdown (or text) of its " +
  `readable part, JSON and text as they are. ${FETCH_RETURNS}`;

export const webTools: ToolDefinition[] = [
  managedTool({ ...common, name: "web_fetch", description: fetchDescription, input: WebFetchInput }),
  // personal-agent's name for the same read; one executor serves both, so they cannot drift apart.
  managedTool({ ...common, name: "fetch_url", description: fetchDescription, input: WebFetchInput }),
  managedTool({
    ...common,
    name: "web_read",
    description:
      "Read a web page, e.g. a web_search result: the clean readable content of the page as markdown, " +
      `without navigation and boilerplate. ${FETCH_RETURNS}`,
    input: WebReadInput,
  }),
  managedTool({
    ...common,
    name: "web_search",
    description:
      "Search the web. Returns { query, results: [{ title, url, snippet, published? }] }; read a result " +
      "with web_read.",
    input: WebSearchInput,
    availability: ["web.search"],
  }),
];
