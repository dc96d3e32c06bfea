import type { Fetch } from "@wakeloop/egress";
import { type ExtractMode, readablePage } from "./readable-page";
import { WebError } from "./web-error";

export interface FetchPageRequest {
  url: string;
  extract: ExtractMode;
  /** Characters of content returned; the rest is cut with a notice saying how much there was. */
  maxChars: number;
  signal?: AbortSignal;
}

export interface FetchedPage {
  url: string;
  /** Where the redirects, if any, ended. */
  final_url: string;
  status: number;
  content_type: string;
  title: string | null;
  content: string;
  truncated: boolean;
  /** Characters of the whole converted content, before truncation. */
  total_chars: number;
}

/** HTML is made readable; JSON and other text is passed through as it is. */
type Kind = "html" | "text";

/**
 * GET a page through `fetch` (the egress guard: address checks on every hop, size and time caps) and
 * make it readable for a model: HTML as markdown or text of its readable part, JSON and text as they
 * are, anything else refused before its body is read.
 */
export async function fetchPage(fetch: Fetch, request: FetchPageRequest): Promise<FetchedPage> {
  const url = httpUrl(request.url);
  const response = await fetch(url, {
    headers: { accept: "text/html,application/xhtml+xml,application/json,text/*;q=0.9,*/*;q=0.1" },
    ...(request.signal && { signal: request.signal }),
  });
  if (response.status >= 400) {
    await response.body?.cancel();
    throw new WebError(
      "web_http_error",
      `${url} answered ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`,
      { retryable: response.status === 429 || response.status >= 500 },
    );
  }
  const contentType = response.headers.get("content-type") ?? "";
  const kind = kindOf(contentType);
  if (kind === null) {
    await response.body?.cancel();
    throw new WebError(
      "web_unsupported_content",
      `${url} answered ${response.status} with binary content (${mediaType(contentType) || "no content type"}); only HTML, JSON and text are returned`,
    );
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  // Undeclared content is taken for text unless its start holds NUL bytes, which no text has.
  if (contentType === "" && bytes.subarray(0, 1024).includes(0)) {
    throw new WebError(
      "web_unsupported_content",
      `${url} answered ${response.status} with binary content and no content type; only HTML, JSON and text are returned`,
    );
  }
  const text = decode(bytes, contentType);
  const page =
    kind === "html"
      ? readablePage(text, response.url || url, request.extract)
      : { title: null, content: text };
  const truncated = page.content.length > request.maxChars;
  const content = truncated
    ? `${page.content.slice(0, request.maxChars)}\n\n[truncated: showing the first ${request.maxChars} of ${page.content.length} characters]`
    : page.content;
  return {
    url,
    final_url: response.url || url,
    status: response.status,
    content_type: mediaType(contentType) || "text/plain",
    title: page.title,
    content,
    truncated,
    total_chars: page.content.length,
  };
}

/** Only absolute http(s) URLs: the egress guard checks the host, this the shape. */
function httpUrl(raw: string): string {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new WebError(
      "web_invalid_url",
      `${JSON.stringify(raw)} is not an absolute URL; give http:// or https://`,
    );
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new WebError(
      "web_invalid_url",
      `${parsed.protocol} URLs cannot be fetched; give http:// or https://`,
    );
  }
  if (parsed.username !== "" || parsed.password !== "") {
    throw new WebError("web_invalid_url", "URLs with credentials in them cannot be fetched");
  }
  return parsed.href;
}

function mediaType(contentType: string): string {
  return (contentType.split(";")[0] ?? "").trim().toLowerCase();
}

function kindOf(contentType: string): Kind | null {
  const type = mediaType(contentType);
  if (type === "text/html" || type === "application/xhtml+xml") return "html";
  if (
    type === "" ||
    type === "application/json" ||
    type.endsWith("+json") ||
    type.startsWith("text/") ||
    type.endsWith("+xml") ||
    ["application/xml", "application/javascript", "application/x-ndjson", "application/yaml"].includes(type)
  ) {
    return "text";
  }
  return null;
}

function decode(bytes: Uint8Array, contentType: string): string {
  const charset = /charset=["']?([^;"'\s]+)/i.exec(contentType)?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8").decode(bytes);
  } catch {
    // An unknown charset label: UTF-8 with replacement characters beats refusing the page.
    return new TextDecoder("utf-8").decode(bytes);
  }
}
