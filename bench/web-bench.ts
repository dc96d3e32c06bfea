import { pathToFileURL } from "node:url";
import { createGuardedFetch } from "@wakeloop/egress";
import { type LatencySummary, startWebFixture, summarize } from "@wakeloop/testing";
import { fetchPage } from "@wakeloop/web-access";

/*
 * web_fetch overhead against a local server (issue #12):   npx tsx bench/web-bench.ts [requests]
 * The same page is read four ways, sequentially, after a warm-up: a plain fetch (the floor), the egress
 * guard alone (DNS-free literal, address check, capped body), and the web_fetch path (guard + content
 * handling) for a JSON body and for an HTML article made readable as markdown. The tool's overhead is
 * the difference from the floor; the platform's wake machinery around a call is the session bench's.
 */

export interface WebBenchResult {
  requests: number;
  plainFetchMs: LatencySummary;
  guardedFetchMs: LatencySummary;
  webFetchJsonMs: LatencySummary;
  webFetchHtmlMs: LatencySummary;
  /** p50 and p99 of web_fetch on the HTML article minus those of the plain fetch. */
  htmlOverheadMs: { p50: number; p99: number };
}

async function timed(requests: number, once: () => Promise<unknown>): Promise<LatencySummary> {
  for (let index = 0; index < 20; index++) await once();
  const samples: number[] = [];
  for (let index = 0; index < requests; index++) {
    const start = performance.now();
    await once();
    samples.push(performance.now() - start);
  }
  return summarize(samples);
}

export async function runWebBench(options: { requests?: number } = {}): Promise<WebBenchResult> {
  const requests = options.requests ?? 500;
  const web = await startWebFixture();
  try {
    const guarded = createGuardedFetch({
      policy: { allowedHosts: ["127.0.0.1"] },
      maxResponseBytes: 5_242_880,
      timeoutMs: 20_000,
      followRedirects: true,
    });
    const article = `${web.origin}/article`;
    const plainFetchMs = await timed(requests, async () => (await fetch(article)).text());
    const guardedFetchMs = await timed(requests, async () => (await guarded(article)).text());
    const page = (url: string) => fetchPage(guarded, { url, extract: "markdown", maxChars: 100_000 });
    const webFetchJsonMs = await timed(requests, () => page(`${web.origin}/data.json`));
    const webFetchHtmlMs = await timed(requests, () => page(article));
    const diff = (a: number, b: number) => Math.round((a - b) * 100) / 100;
    return {
      requests,
      plainFetchMs,
      guardedFetchMs,
      webFetchJsonMs,
      webFetchHtmlMs,
      htmlOverheadMs: {
        p50: diff(webFetchHtmlMs.p50, plainFetchMs.p50),
        p99: diff(webFetchHtmlMs.p99, plainFetchMs.p99),
      },
    };
  } finally {
    await web.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await runWebBench({ requests: Number(process.argv[2] ?? "500") });
  console.log(JSON.stringify(result, null, 2));
  process.exit(0);
}
