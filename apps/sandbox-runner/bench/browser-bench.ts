import { pathToFileURL } from "node:url";
import {
  BROWSER_SANDBOX_IMAGE,
  type LatencySummary,
  requireBrowserImage,
  summarize,
} from "@wakeloop/testing";
import { RunnerFixture, testEnvironment } from "../src/testing/docker-fixture";
import { SessionDriver } from "../src/testing/session-driver";

// The browser tools on the local Docker (issue #12): cold start, the first browser_navigate of a fresh
// sandbox (Chromium started in the container, Playwright connected over the exec pipe, the page
// loaded), and warm calls on the same browser. The page is served inside the sandbox, as in the
// tests. Run: npx tsx apps/sandbox-runner/bench/browser-bench.ts

export type BrowserBench = {
  cold_first_navigate_ms: LatencySummary;
  warm_navigate_ms: LatencySummary;
  warm_extract_text_ms: LatencySummary;
  warm_screenshot_ms: LatencySummary;
};

const PORT = 8767;
const URL_ = `http://127.0.0.1:${PORT}/`;
const PAGE = `<!doctype html><html><head><title>bench</title></head><body><h1>bench</h1>${"<p>text</p>".repeat(200)}</body></html>`;

/** A ready sandbox of the browser image serving PAGE on its loopback, with no browser started yet. */
async function servingSandbox(manager: Awaited<ReturnType<RunnerFixture["manager"]>>) {
  const session = new SessionDriver(
    manager,
    undefined,
    testEnvironment({ image: BROWSER_SANDBOX_IMAGE, memory_mb: 1_024, pids_limit: 512 }),
  );
  await session.ensure();
  await session.run("write", { path: "site/index.html", content: PAGE });
  await session.run("shell_run", {
    command: `python3 -m http.server ${PORT} --bind 127.0.0.1 --directory /workspace/site`,
    background: true,
  });
  const up = await session.run("shell_run", {
    command: `for i in $(seq 1 100); do python3 -c "import urllib.request; urllib.request.urlopen('${URL_}')" 2>/dev/null && exit 0; sleep 0.1; done; exit 1`,
  });
  if (!up.text.includes("exit code 0")) throw new Error(`the bench page is not served: ${up.text}`);
  return session;
}

async function timed(run: () => Promise<{ is_error: boolean; text: string }>): Promise<number> {
  const start = performance.now();
  const result = await run();
  const elapsed = performance.now() - start;
  if (result.is_error) throw new Error(`browser call failed: ${result.text}`);
  return elapsed;
}

export async function runBrowserBench(
  options: { coldRuns?: number; warmRuns?: number } = {},
): Promise<BrowserBench> {
  const coldRuns = options.coldRuns ?? 5;
  const warmRuns = options.warmRuns ?? 50;
  await requireBrowserImage();
  const fixture = await RunnerFixture.create();
  try {
    const manager = await fixture.manager();
    const cold: number[] = [];
    let warm: SessionDriver | null = null;
    for (let i = 0; i < coldRuns; i += 1) {
      const session = await servingSandbox(manager);
      cold.push(await timed(() => session.run("browser_navigate", { url: URL_ })));
      if (i === coldRuns - 1) warm = session;
      else await manager.release(session.sessionId, session.tenantId);
    }
    if (warm === null) throw new Error("coldRuns must be at least 1");
    const session = warm;
    const sample = async (run: () => Promise<{ is_error: boolean; text: string }>) => {
      const samples: number[] = [];
      for (let i = 0; i < warmRuns; i += 1) samples.push(await timed(run));
      return summarize(samples);
    };
    return {
      cold_first_navigate_ms: summarize(cold),
      warm_navigate_ms: await sample(() => session.run("browser_navigate", { url: URL_ })),
      warm_extract_text_ms: await sample(() => session.run("browser_extract_text", { selector: "h1" })),
      warm_screenshot_ms: await sample(() => session.run("browser_screenshot", {})),
    };
  } finally {
    await fixture.cleanup();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(JSON.stringify(await runBrowserBench(), null, 2));
}
