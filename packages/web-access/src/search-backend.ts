import type { Fetch } from "@wakeloop/egress";
import { z } from "zod";
import { WebError } from "./web-error";

export interface SearchRequest {
  query: string;
  count: number;
  language?: string;
  timeRange?: "day" | "month" | "year";
  signal?: AbortSignal;
}

export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
  published?: string;
}

/** A web search the operator configured; `web_search` is offered only when there is one. */
export interface SearchBackend {
  search(request: SearchRequest): Promise<SearchResult[]>;
}

/**
 * SearXNG's JSON API (`GET /search?q=…&format=json`), the wire format Wakeloop speaks: self-hostable,
 * keyless, and fronting many engines. Fields we do not use are ignored; a result without a URL is dropped.
 */
export const SearxngResponse = z.object({
  results: z.array(
    z.object({
      url: z.string().optional(),
      title: z.string().optional(),
      content: z.string().optional(),
      publishedDate: z.string().nullable().optional(),
    }),
  ),
});
export type SearxngResponse = z.infer<typeof SearxngResponse>;

/** `baseUrl` is the SearXNG root (`https://search.example/`); its `format=json` must be enabled. */
export function searxngBackend(fetch: Fetch, baseUrl: string): SearchBackend {
  const endpoint = new URL("search", baseUrl.endsWith("/") ? baseUrl : `${baseUrl}/`);
  return {
    async search({ query, count, language, timeRange, signal }) {
      const url = new URL(endpoint);
      url.searchParams.set("q", query);
      url.searchParams.set("format", "json");
      if (language !== undefined) url.searchParams.set("language", language);
      if (timeRange !== undefined) url.searchParams.set("time_range", timeRange);
      const response = await fetch(url, {
        headers: { accept: "application/json" },
        ...(signal && { signal }),
      });
      if (!response.ok) {
        await response.body?.cancel();
        throw new WebError("web_search_failed", `the search backend answered ${response.status}`, {
          retryable: response.status === 429 || response.status >= 500,
        });
      }
      const parsed = SearxngResponse.safeParse(await response.json().catch(() => null));
      if (!parsed.success) {
        throw new WebError(
          "web_search_failed",
          "the search backend answered something that is not SearXNG JSON",
        );
      }
      return parsed.data.results
        .filter((result) => result.url !== undefined && URL.canParse(result.url))
        .slice(0, count)
        .map((result) => ({
          title: result.title ?? "",
          url: result.url as string,
          snippet: result.content ?? "",
          ...(result.publishedDate && { published: result.publishedDate }),
        }));
    },
  };
}
