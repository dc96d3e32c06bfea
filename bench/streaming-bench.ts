import { pathToFileURL } from "node:url";
import type { SessionEvent, StreamDelta } from "@wakeloop/contracts";
import { createClient } from "@wakeloop/sdk";
import { type LatencySummary, Platform, type RunMode, summarize } from "@wakeloop/testing";
import { BENCH_APP_ENV, type BenchProvider, say } from "./bench-sessions";
import { now } from "./stats";

/*
 * Live token streaming (issue #29 item 4):   npx tsx bench/streaming-bench.ts [tokens]
 * The fake model (in this process, so one clock) streams turns of tokens 10 ms apart, as a model
 * writing ~100 tokens/s does, and stamps each token as it hands it to the socket (`outputAt`). An SSE
 * client in this process, reading the session's stream with `?deltas=true` through the SDK, stamps
 * each delta and each stored `agent.message` as it arrives. A token's latency is from its send to the
 * arrival of the first delta that holds it ("after": live deltas), and to the arrival of the stored
 * agent.message ("before": the only way a token reached a client until now), over the same tokens of
 * the same run. The path measured: provider stream → worker → core NATS → gateway → SSE → SDK parse.
 */

const TOKENS_PER_TURN = 50;
const TOKEN_GAP_MS = 10;

export interface StreamingBenchResult {
  provider: BenchProvider;
  tokens: number;
  /** Token sent by the model → the client has it in a live delta. */
  deltaMs: LatencySummary;
  /** Token sent by the model → the client has the stored agent.message that holds it. */
  finalMessageMs: LatencySummary;
  /** Delta messages the client received per token the model sent (below 1: coalesced). */
  deltasPerToken: number;
}

interface Arrival {
  item: SessionEvent | StreamDelta;
  at: number;
}

export async function runStreamingBench(
  options: { tokens?: number; run?: RunMode; provider?: BenchProvider } = {},
): Promise<StreamingBenchResult> {
  const provider = options.provider ?? "openai_compatible";
  const turns = Math.max(1, Math.round((options.tokens ?? 500) / TOKENS_PER_TURN));
  const platform = await Platform.start({ workers: 1, run: options.run, appEnv: BENCH_APP_ENV });
  const stop = new AbortController();
  try {
    const client = createClient({ baseUrl: platform.baseUrl, apiKey: platform.apiKey });
    const agent = await platform.createAgent({ model: platform.fakeModel(provider) });
    const session = await client.sessions.create({ agent });
    const arrivals: Arrival[] = [];
    let turnEnded: { resolve: () => void; reject: (error: unknown) => void } | undefined;
    const reading = (async () => {
      for await (const item of client.events.stream(session.id, { signal: stop.signal, deltas: true })) {
        arrivals.push({ item, at: now() });
        if (item.type === "session.status_idle") turnEnded?.resolve();
      }
    })().catch((error: unknown) => {
      if (!stop.signal.aborted) turnEnded?.reject(error);
    });

    const chunksOf = (turn: number) =>
      Array.from({ length: TOKENS_PER_TURN }, (_, index) => `t${turn}.${index} `);
    const deltaMs: number[] = [];
    const finalMessageMs: number[] = [];
    let deltaCount = 0;
    // Turn 0 warms up (connections, JIT) and is not counted.
    for (let turn = 0; turn <= turns; turn++) {
      const chunks = chunksOf(turn);
      const prompt = `turn ${turn}`;
      platform.fake.enqueue({ text: chunks.join(""), chunks, chunkDelayMs: TOKEN_GAP_MS });
      const from = arrivals.length;
      const ended = new Promise<void>((resolve, reject) => {
        turnEnded = { resolve, reject };
      });
      await say(platform, session.id, prompt);
      await ended;
      if (turn === 0) continue;
      const request = platform.fake.requests.findLast((recorded) => recorded.view?.lastUserText === prompt);
      const sentAt = request?.outputAt ?? [];
      if (sentAt.length !== chunks.length) throw new Error(`turn ${turn}: ${sentAt.length} tokens stamped`);
      const turnArrivals = arrivals.slice(from);
      const message = turnArrivals.find((arrival) => arrival.item.type === "agent.message");
      if (message === undefined) throw new Error(`turn ${turn}: no agent.message`);
      // Where each delta's text ends in the answer, and when it arrived.
      let received = 0;
      const deltaEnds: Array<{ end: number; at: number }> = [];
      for (const arrival of turnArrivals) {
        if (arrival.item.type !== "agent.message_delta") continue;
        received += arrival.item.text.length;
        deltaEnds.push({ end: received, at: arrival.at });
      }
      deltaCount += deltaEnds.length;
      let end = 0;
      for (const [index, chunk] of chunks.entries()) {
        end += chunk.length;
        const sent = sentAt[index] ?? 0;
        // A token lost on the live path (none should be) counts as arriving with the stored message.
        const live = deltaEnds.find((delta) => delta.end >= end)?.at ?? message.at;
        deltaMs.push(live - sent);
        finalMessageMs.push(message.at - sent);
      }
    }
    stop.abort();
    await reading;
    return {
      provider,
      tokens: deltaMs.length,
      deltaMs: summarize(deltaMs),
      finalMessageMs: summarize(finalMessageMs),
      deltasPerToken: Math.round((deltaCount / deltaMs.length) * 100) / 100,
    };
  } finally {
    stop.abort();
    await platform.stop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await runStreamingBench({ tokens: Number(process.argv[2] ?? "500") });
  console.log(JSON.stringify(result, null, 2));
  process.exit(0);
}
