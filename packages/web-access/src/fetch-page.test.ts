import { createGuardedFetch, EgressError, findEgressError } from "@wakeloop/egress";
import { FIXTURE_ARTICLE, startWebFixture, type WebFixture } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchPage } from "./fetch-page";
import { searxngBackend } from "./search-backend";
import { WebError } from "./web-error";

let web: WebFixture;
beforeAll(async () => {
  web = await startWebFixture();
});
afterAll(() => web.close());

const guarded = (allowedHosts: string[], maxResponseBytes = 1_000_000) =>
  createGuardedFetch({ policy: { allowedHosts }, maxResponseBytes, timeoutMs: 5_000, followRedirects: true });
const allowed = () => guarded(["127.0.0.1"]);
const page = (path: string, extra: { maxChars?: number; extract?: "markdown" | "text" } = {}) =>
  fetchPage(allowed(), { url: `${web.origin}${path}`, extract: "markdown", maxChars: 50_000, ...extra });

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.unreachable("the fetch succeeded"),
    (error: unknown) => error,
  );
}

describe("fetchPage", () => {
  it("turns an HTML page into the markdown of its readable part, with absolute links", async () => {
    const result = await page("/article");
    expect(result).toMatchObject({ status: 200, content_type: "text/html", title: FIXTURE_ARTICLE.title });
    expect(result.content).toContain(`## ${FIXTURE_ARTICLE.heading}`);
    expect(result.content).toContain(FIXTURE_ARTICLE.sentence);
    expect(result.content).toContain(`[the data](${web.origin}/data.json)`);
    expect(result.content).not.toContain("not for the model");
    expect(result.content).not.toContain("color:red");
  });

  it("gives plain text when asked", async () => {
    const result = await page("/article", { extract: "text" });
    expect(result.content).toContain(FIXTURE_ARTICLE.sentence);
    expect(result.content).not.toContain("##");
  });

  it("passes JSON and text through as they are", async () => {
    expect((await page("/data.json")).content).toBe('{"answer":42,"items":[1,2]}');
    expect((await page("/notes.txt")).content).toBe("plain notes\nsecond line");
  });

  it("cuts long content with a notice saying how much there was", async () => {
    const result = await page("/large.txt?bytes=5000", { maxChars: 1000 });
    expect(result.truncated).toBe(true);
    expect(result.total_chars).toBe(5000);
    expect(result.content).toMatch(/^x{1000}\n\n\[truncated: showing the first 1000 of 5000 characters\]$/);
  });

  it("follows a redirect within allowed hosts and reports where it ended", async () => {
    const result = await page("/redirect");
    expect(result.final_url).toBe(`${web.origin}/article`);
    expect(result.title).toBe(FIXTURE_ARTICLE.title);
  });

  it("refuses binary content without reading it", async () => {
    const error = await rejection(page("/image.png"));
    expect(error).toBeInstanceOf(WebError);
    expect(error).toMatchObject({ code: "web_unsupported_content" });
    expect((error as Error).message).toContain("image/png");
  });

  it("turns an error status into an error naming it", async () => {
    expect(await rejection(page("/missing"))).toMatchObject({ code: "web_http_error", retryable: false });
  });

  it.each([
    ["not a url", "is not an absolute URL"],
    ["file:///etc/passwd", "file: URLs cannot be fetched"],
    ["ftp://example.com/x", "ftp: URLs cannot be fetched"],
    ["http://user:secret@example.com/", "credentials"],
  ])("refuses %s before any request", async (url, message) => {
    const error = await rejection(fetchPage(allowed(), { url, extract: "markdown", maxChars: 100 }));
    expect(error).toMatchObject({ code: "web_invalid_url" });
    expect((error as Error).message).toContain(message);
  });

  it.each([
    ["a loopback host that is not allowlisted", () => `${web.privateOrigin}/article`, "loopback"],
    ["localhost by name", () => `http://localhost:${new URL(web.origin).port}/article`, "loopback"],
    ["the metadata address", () => "http://169.254.169.254/latest/meta-data/", "linkLocal"],
    ["a private address", () => "http://10.0.0.1/", "private"],
    ["a redirect from an allowed host to a refused one", () => `${web.origin}/redirect-private`, "loopback"],
  ])("refuses %s through the egress guard", async (_name, url, range) => {
    const refused = findEgressError(
      await rejection(fetchPage(allowed(), { url: url(), extract: "markdown", maxChars: 100 })),
    );
    expect(refused).toBeInstanceOf(EgressError);
    expect(refused?.code).toBe("egress_refused");
    expect(refused?.details.range).toContain(range);
  });

  it("refuses a page larger than the byte limit", async () => {
    const error = await rejection(
      fetchPage(guarded(["127.0.0.1"], 2_000), {
        url: `${web.origin}/large.txt?bytes=10000`,
        extract: "markdown",
        maxChars: 100,
      }),
    );
    expect(findEgressError(error)?.code).toBe("egress_response_too_large");
  });
});

describe("searxngBackend", () => {
  it("asks the SearXNG JSON API and keeps results that have a URL", async () => {
    const backend = searxngBackend(allowed(), web.searchUrl);
    const results = await backend.search({ query: "durable wakes", count: 5 });
    expect(web.queries).toContain("durable wakes");
    expect(results).toEqual([
      {
        title: `${FIXTURE_ARTICLE.title} (durable wakes)`,
        url: `${web.origin}/article`,
        snippet: FIXTURE_ARTICLE.sentence,
        published: "2026-01-02T00:00:00",
      },
      { title: "The data", url: `${web.origin}/data.json`, snippet: "Numbers" },
    ]);
    expect(await backend.search({ query: "one", count: 1 })).toHaveLength(1);
  });

  it("names the status when the backend fails", async () => {
    const wrongPath = searxngBackend(allowed(), `${web.origin}/nothing-here`);
    expect(await rejection(wrongPath.search({ query: "q", count: 3 }))).toMatchObject({
      code: "web_search_failed",
      message: "the search backend answered 404",
    });
  });
});
