import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { subjects } from "@wakeloop/bus";
import type { SessionEvent } from "@wakeloop/contracts";
import { type LocalNatsCluster, Platform, startLocalNatsCluster } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The platform on a three-node JetStream cluster with every stream replicated three times: while
// sessions run tool loops, the node leading the events stream is killed with SIGKILL and brought back,
// then the node leading the wakes stream. Nothing is restarted by hand. Afterwards every session has
// finished its loop, every committed event is in the events stream exactly once, and no tool call ran
// twice. WL_CHAOS_SESSIONS sets the load (20 here, 200 with `npm run chaos`); the figures are printed.

const SESSIONS = Number(process.env.WL_CHAOS_SESSIONS ?? 20);
const STEPS = 12;
/** Each model answer takes this long, so the loops are still running when the nodes die. */
const MODEL_DELAY_MS = 150;

let cluster: LocalNatsCluster;
let platform: Platform;

/** `set_state` `<session>-1` … `<session>-STEPS`, one per model answer, then a final text. */
function nextTurn(request: { lastUserText: string; toolResults: { text: string }[] }) {
  const last = request.toolResults.at(-1);
  const done =
    last === undefined ? 0 : Number((JSON.parse(last.text) as { key: string }).key.split("-").at(-1));
  if (done >= STEPS) return { text: `stored ${STEPS} keys`, delayMs: MODEL_DELAY_MS };
  const key = `${request.lastUserText}-${done + 1}`;
  return { toolCalls: [{ name: "set_state", input: { key, value: done + 1 } }], delayMs: MODEL_DELAY_MS };
}

beforeAll(async () => {
  cluster = await startLocalNatsCluster(3);
  platform = await Platform.start({
    natsUrl: cluster.url,
    // The test reads every session's events through the API: its key must not hit the request limit.
    env: {
      NATS_STREAM_REPLICAS: "3",
      LEASE_SWEEP_INTERVAL_MS: "500",
      GATEWAY_RATE_LIMIT_REQUESTS: "1000000",
    },
    script: { defaultTurn: nextTurn },
  });
}, 180_000);

afterAll(async () => {
  await platform?.stop();
  await cluster?.stop();
}, 120_000);

/** Polls until `read` answers something other than `unwanted`; the time it took, in ms. */
async function timeUntilChanged(read: () => Promise<string>, unwanted: string): Promise<number> {
  const started = Date.now();
  for (;;) {
    const value = await read().catch(() => unwanted);
    if (value !== unwanted) return Date.now() - started;
    if (Date.now() - started > 60_000) throw new Error(`still ${unwanted} after 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Every message of `stream`, as the `Nats-Msg-Id`s it holds, read through an ordered consumer. */
async function msgIds(stream: string): Promise<string[]> {
  const nc = await connect({ servers: cluster.url.split(",") });
  try {
    const total = (await (await jetstreamManager(nc)).streams.info(stream)).state.messages;
    const consumer = await jetstream(nc).consumers.get(stream);
    const ids: string[] = [];
    while (ids.length < total) {
      const batch = await consumer.fetch({ max_messages: Math.min(500, total - ids.length), expires: 5_000 });
      for await (const message of batch) ids.push(message.headers?.get("Nats-Msg-Id") ?? "");
    }
    return ids;
  } finally {
    await nc.close();
  }
}

describe("a three-node JetStream cluster losing its stream leaders", () => {
  it("loses, duplicates and repeats nothing, and recovers by itself", async () => {
    const agentId = await platform.createAgent({ name: "chaos" });
    const sessions: string[] = [];
    for (let index = 0; index < SESSIONS; index++) {
      const created = await platform.request("POST", "/v1/sessions", { agent: agentId });
      expect(created.status).toBe(200);
      sessions.push(created.body.id as string);
    }
    const started = Date.now();
    await Promise.all(
      sessions.map(async (id, index) => {
        const sent = await platform.request("POST", `/v1/sessions/${id}/events`, {
          events: [{ type: "user.message", content: [{ type: "text", text: `s${index}` }] }],
        });
        expect(sent.status).toBe(202);
      }),
    );

    const names = subjects(platform.prefix);
    const recovery: Record<string, { killed: string; newLeaderMs: number }> = {};
    for (const stream of [names.stream("events"), names.stream("wakes")]) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const leader = await cluster.streamLeader(stream);
      await cluster.kill(leader);
      const newLeaderMs = await timeUntilChanged(() => cluster.streamLeader(stream), leader);
      recovery[stream] = { killed: leader, newLeaderMs };
      await cluster.start(leader);
    }

    // One session at a time: by the time the first is done most others are, and the polling stays light.
    const finished: SessionEvent[][] = [];
    for (const id of sessions) {
      await platform.waitForIdle(id, "end_turn", 0, 300_000);
      finished.push(await platform.events(id));
    }
    const runMs = Date.now() - started;

    const committed: SessionEvent[] = finished.flat();
    for (const [index, events] of finished.entries()) {
      // Gapless, each step once, each key written once, the loop carried to its end.
      expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
      const writes = events.flatMap((event) =>
        event.type === "agent.tool_use" && event.name === "set_state" ? [String(event.input.key)] : [],
      );
      expect(writes).toEqual(Array.from({ length: STEPS }, (_, step) => `s${index}-${step + 1}`));
      const results = events.filter((event) => event.type === "agent.tool_result");
      expect(results.filter((event) => event.is_error)).toEqual([]);
      expect(results).toHaveLength(STEPS);
    }

    // The events stream holds every committed event exactly once (the outbox drains completely). A
    // read can time out while the restarted node catches up: it is asked again until the deadline.
    const deadline = Date.now() + 90_000;
    const read = () =>
      msgIds(names.stream("events")).catch((error: unknown) => {
        if (Date.now() > deadline) throw error;
        return [] as string[];
      });
    let streamed = await read();
    while (streamed.length < committed.length && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      streamed = await read();
    }
    const lost = committed.filter((event) => !streamed.includes(event.id));
    expect(lost.map((event) => [event.session_id, event.seq, event.type])).toEqual([]);
    expect(streamed.length - new Set(streamed).size, "duplicated messages").toBe(0);
    expect(new Set(streamed).size).toBe(committed.length);

    console.log(
      JSON.stringify({
        sessions: SESSIONS,
        steps_per_session: STEPS,
        committed_events: committed.length,
        streamed_events: streamed.length,
        lost: lost.length,
        duplicated: streamed.length - new Set(streamed).size,
        recovery,
        run_ms: runMs,
      }),
    );
  }, 600_000);
});
