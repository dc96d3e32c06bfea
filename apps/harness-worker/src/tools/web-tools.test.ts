import { createGuardedFetch } from "@wakeloop/egress";
import { startWebFixture, type WebFixture } from "@wakeloop/testing";
import { searxngBackend } from "@wakeloop/web-access";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runWebTool, type WebAccess } from "./web-tools";

let web: WebFixture;
let access: WebAccess;
beforeAll(async () => {
  web = await startWebFixture();
  const fetch = createGuardedFetch({
    policy: { allowedHosts: ["127.0.0.1"] },
    maxResponseBytes: 100_000,
    timeoutMs: 5_000,
    followRedirects: true,
  });
  access = { fetch, search: searxngBackend(fetch, web.searchUrl), maxChars: 500 };
});
afterAll(() => web.close());

const run = (name: string, input: Record<string, unknown>, over: Partial<WebAccess> = {}) =>
  runWebTool({ ...access, ...over }, { name, input }, new AbortController().signal);
const text = (outcome: Awaited<ReturnType<typeof run>>) =>
  outcome.content.map((block) => (block.type === "text" ? block.text : "")).join("");

describe("runWebTool", () => {
  it("serves web_fetch, fetch_url and web_read from one implementation", async () => {
    const url = `${web.origin}/large.txt?bytes=300`;
    const results = await Promise.all(
      ["web_fetch", "fetch_url", "web_read"].map((name) => run(name, { url })),
    );
    for (const outcome of results) {
      expect(outcome.isError).toBe(false);
      expect(outcome.result).toMatchObject({ status: 200, content: "x".repeat(300), truncated: false });
    }
  });

  it("caps max_chars at the platform's limit", async () => {
    const url = `${web.origin}/large.txt?bytes=2000`;
    expect((await run("web_fetch", { url, max_chars: 10_000 })).result).toMatchObject({
      truncated: true,
      total_chars: 2000,
    });
    expect(text(await run("web_fetch", { url, max_chars: 100 }))).toContain("showing the first 100 of 2000");
  });

  it.each([
    ["a refused address", `http://169.254.169.254/`, "linkLocal addresses are reachable only for hosts on"],
    ["a redirect to a refused address", "/redirect-private", "egress to 127.0.0.2 is refused"],
    ["binary content", "/image.png", "binary content (image/png)"],
    ["an error status", "/missing", "answered 404"],
    ["a host that is down", "http://127.0.0.1:2/", "could not be reached (ECONNREFUSED)"],
  ])("turns %s into an error result", async (_name, target, message) => {
    const url = target.startsWith("/") ? `${web.origin}${target}` : target;
    const outcome = await run("web_fetch", { url });
    expect(outcome.isError).toBe(true);
    expect(text(outcome)).toContain(message);
  });

  it("stops a page that outlasts the time limit with an error result naming it", async () => {
    const fetch = createGuardedFetch({
      policy: { allowedHosts: ["127.0.0.1"] },
      maxResponseBytes: 100_000,
      timeoutMs: 200,
      followRedirects: true,
    });
    const outcome = await run("web_fetch", { url: `${web.origin}/slow?ms=3000` }, { fetch });
    expect(outcome.isError).toBe(true);
    expect(text(outcome)).toBe("the request took longer than the egress limit of 200 ms");
  });

  it("searches the configured backend, and says so when there is none", async () => {
    const found = await run("web_search", { query: "leases", count: 1 });
    expect(found.result).toMatchObject({ query: "leases", results: [{ url: `${web.origin}/article` }] });
    const none = await run("web_search", { query: "leases" }, { search: null });
    expect(none).toMatchObject({ isError: true });
    expect(text(none)).toBe("web_search is not configured on this platform");
  });

  it("rethrows when the call was interrupted, so it is recorded as cancelled", async () => {
    const stop = new AbortController();
    stop.abort(new Error("interrupted"));
    await expect(
      runWebTool(access, { name: "web_fetch", input: { url: `${web.origin}/article` } }, stop.signal),
    ).rejects.toThrow();
  });
});
