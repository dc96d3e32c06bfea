import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { type LatencySummary, Platform, summarize } from "@wakeloop/testing";
import { launchChromium } from "@wakeloop/testing/browser";
import { now } from "./stats";

// The web console's live path, measured in Chromium against the compiled platform: an event accepted
// by the API until its row is in the session page's timeline (gateway SSE → SDK stream → React), and
// opening a session page with history until its last event is shown. Clocks: the page's and this
// process's `performance.timeOrigin + performance.now()`, the same epoch on one machine.

export interface ConsoleBenchResult {
  eventToTimelineMs: LatencySummary;
  openSessionMs: LatencySummary;
  historyEvents: number;
  bundleBytes: { script: number; scriptBrotli: number };
}

// In every page, before its scripts: when each timeline row (by seq) first appeared.
const RECORD_ROWS = `
  window.__rowSeen = {};
  new MutationObserver(() => {
    for (const row of document.querySelectorAll("li[data-seq]")) {
      const seq = row.getAttribute("data-seq");
      if (!(seq in window.__rowSeen)) window.__rowSeen[seq] = performance.timeOrigin + performance.now();
    }
  }).observe(document, { childList: true, subtree: true });
`;

export async function runConsoleBench(options: { quick: boolean }): Promise<ConsoleBenchResult> {
  const turns = options.quick ? 10 : 50;
  const opens = options.quick ? 5 : 20;
  const platform = await Platform.start({ workers: 1, run: "dist" });
  const browser = await launchChromium();
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(30_000);
    await context.addInitScript(RECORD_ROWS);
    const page = await context.newPage();
    await page.goto(`${platform.baseUrl}/console`);
    await page.getByLabel("API key").fill(platform.apiKey);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Sessions", level: 1 }).waitFor();

    const agentId = await platform.createAgent();
    const created = await platform.request("POST", "/v1/sessions", { agent: agentId });
    const id = created.body.id as string;
    await page.goto(`${platform.baseUrl}/console/sessions/${id}`);
    await page.getByRole("heading", { name: "Timeline" }).waitFor();

    const rowSeen = (seq: number) =>
      page.evaluate(`window.__rowSeen[${seq}] ?? null`) as Promise<number | null>;
    const shown = async (seq: number): Promise<number> => {
      for (;;) {
        const at = await rowSeen(seq);
        if (at !== null) return at;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };

    const eventToTimeline: number[] = [];
    for (let turn = 0; turn < turns; turn++) {
      platform.fake.enqueue({ text: `answer ${turn}` });
      const sentAt = now();
      const sent = await platform.request("POST", `/v1/sessions/${id}/events`, {
        events: [{ type: "user.message", content: [{ type: "text", text: `turn ${turn}` }] }],
      });
      if (sent.status !== 202) throw new Error(`message: ${sent.status} ${JSON.stringify(sent.body)}`);
      const seq = sent.body.events[0].seq as number;
      eventToTimeline.push((await shown(seq)) - sentAt);
      // The turn ends before the next begins, so each message meets an idle stream.
      const idle = await platform.waitForIdle(id, "end_turn", seq, 60_000);
      await shown(idle.seq);
    }

    const history = await platform.events(id);
    const lastSeq = history.at(-1)?.seq ?? 0;
    const openSession: number[] = [];
    for (let open = 0; open < opens; open++) {
      const startedAt = now();
      await page.reload();
      openSession.push((await shown(lastSeq)) - startedAt);
    }

    const assets = join(import.meta.dirname, "..", "apps", "console", "dist", "assets");
    const script = (await readdir(assets)).find((name) => name.endsWith(".js"));
    if (script === undefined) throw new Error("the console is not built: run `npm run build`");
    return {
      eventToTimelineMs: summarize(eventToTimeline),
      openSessionMs: summarize(openSession),
      historyEvents: history.length,
      bundleBytes: {
        script: (await stat(join(assets, script))).size,
        scriptBrotli: (await stat(join(assets, `${script}.br`))).size,
      },
    };
  } finally {
    await browser.close();
    await platform.stop();
  }
}
