// Dispatch latency as a client of a running platform sees it (issue #9): user message POSTed to an idle
// session → the model request arriving at a fake model, over sequential turns. A black box: it talks to
// the gateway's public API with an API key only, and serves the model itself, so both ends of each
// measurement are stamped on this process's clock. The in-process fake model is TypeScript, hence:
//
//   node --import tsx infra/dispatch-probe.mjs [--turns 200] [--sessions 1] [--warmup 10] [--gap-ms 0]
//        [--url http://127.0.0.1:8080] [--key-file .wakeloop/demo-key] [--json FILE]
//        [--hops postgres://postgres@127.0.0.1:5432/wakeloop]
//
// Against the platform `bash infra/up.sh` starts (which the probe neither starts nor stops). With
// --hops it also reads the wake and event rows of each turn from Postgres (the owner's url), to say
// which hop a slow turn lost its time in: gateway commit, the wake opened, a worker
// taking its lease, the worker reaching the model.
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { startFakeModelServer } from "@wakeloop/fake-model";
import pg from "pg";

const { values: args } = parseArgs({
  options: {
    turns: { type: "string", default: "200" },
    sessions: { type: "string", default: "1" },
    warmup: { type: "string", default: "10" },
    "gap-ms": { type: "string", default: "0" },
    url: { type: "string", default: "http://127.0.0.1:8080" },
    "key-file": { type: "string", default: ".wakeloop/demo-key" },
    json: { type: "string" },
    hops: { type: "string" },
  },
});
const turns = Number(args.turns);
const warmup = Number(args.warmup);
const apiKey = readFileSync(args["key-file"], "utf8").trim();
const clock = () => performance.timeOrigin + performance.now();

async function api(method, path, body) {
  const response = await fetch(`${args.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${apiKey}`,
      ...(body !== undefined && { "content-type": "application/json" }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until the session is idle with its turn ended: the next message then needs a new wake. */
async function idle(sessionId, afterSeq) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const session = await api("GET", `/v1/sessions/${sessionId}`);
    if (session.status === "idle" && session.last_seq > afterSeq) return;
    if (Date.now() > deadline)
      throw new Error(`session ${sessionId} did not idle: ${JSON.stringify(session)}`);
    await sleep(5);
  }
}

function summary(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
  const round = (v) => Math.round(v * 10) / 10;
  return {
    n: sorted.length,
    p50: round(at(0.5)),
    p95: round(at(0.95)),
    p99: round(at(0.99)),
    max: round(at(1)),
  };
}

const fake = await startFakeModelServer({ script: { defaultTurn: { text: "ok" } } });
try {
  const agent = await api("POST", "/v1/agents", {
    name: "dispatch-probe",
    model: { provider: "openai_compatible", id: "fake-model", base_url: `${fake.url}/v1` },
    system: "Answer briefly.",
  });
  const sessions = [];
  for (let i = 0; i < Number(args.sessions); i++)
    sessions.push(await api("POST", "/v1/sessions", { agent: agent.id, title: `probe ${i}` }));

  const samples = [];
  for (let turn = 0; turn < warmup + turns; turn++) {
    const session = sessions[turn % sessions.length];
    const before = await api("GET", `/v1/sessions/${session.id}`);
    const seen = fake.requests.length;
    const sent = clock();
    const posted = await api("POST", `/v1/sessions/${session.id}/events`, {
      events: [{ type: "user.message", content: [{ type: "text", text: `turn ${turn}` }] }],
    });
    const accepted = clock();
    const request = await fake.waitForRequest(seen + 1, 15_000);
    if (turn >= warmup)
      samples.push({
        turn,
        session_id: session.id,
        event_id: posted.events[0].id,
        sent,
        fromSent: request.receivedAt - sent,
        fromAccepted: request.receivedAt - accepted,
        modelAt: request.receivedAt,
      });
    await idle(session.id, before.last_seq + 1);
    // A person reads the answer before the next turn; 0 sends at once, as a script would, into the
    // work the platform does after a turn (relay, the orchestrator's idle handling, the worker's ack).
    await sleep(Number(args["gap-ms"]));
  }

  const report = {
    turns,
    sessions: sessions.length,
    gapMs: Number(args["gap-ms"]),
    fromSentMs: summary(samples.map((s) => s.fromSent)),
    fromAcceptedMs: summary(samples.map((s) => s.fromAccepted)),
  };
  const split = args.hops ? await hops(args.hops, samples) : [];
  if (args.hops) report.hops = hopSummary(split);
  console.log(JSON.stringify(report, null, 2));
  if (args.json) writeFileSync(args.json, JSON.stringify({ report, samples, split }, null, 2));
} finally {
  await fake.close();
}

/** Each hop's distribution, and the ten slowest turns hop by hop. */
function hopSummary(split) {
  const names = ["commit", "open", "lease", "prepare", "model"];
  const round = (v) => Math.round(v * 10) / 10;
  const slowest = [...split].sort((a, b) => b.total - a.total).slice(0, 10);
  return {
    perHopMs: Object.fromEntries(names.map((name) => [name, summary(split.map((s) => s[name]))])),
    slowest: slowest.map((s) => Object.fromEntries(Object.entries(s).map(([k, v]) => [k, round(v)]))),
  };
}

/**
 * Each turn's time split at the rows the platform wrote on its way: `commit` until the gateway stamped
 * the user message, `open` until the statement that opened the wake began (the gateway's, right after
 * the append, for a client's message), `lease` until the worker's lease transaction began, `prepare` until the worker stamped
 * `span.model_request_start` (session loaded, request started), `model` until the request arrived.
 * Event stamps are the writing service's clock, wake stamps Postgres' `now()` (transaction start), all
 * on this host.
 */
async function hops(url, samples) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const rows = new Map();
    for (const sample of samples) {
      const { rows: found } = await client.query(
        `SELECT e.created_at AS committed, w.created_at AS opened, w.started_at AS started,
                (SELECT s.created_at FROM session_events s
                  WHERE s.session_id = e.session_id AND s.seq > e.seq AND s.type = 'span.model_request_start'
                  ORDER BY s.seq LIMIT 1) AS requested
           FROM session_events e
           JOIN wakes w ON w.session_id = e.session_id AND w.created_at >= e.created_at
          WHERE e.id = $1
          ORDER BY w.created_at LIMIT 1`,
        [sample.event_id],
      );
      if (found[0]) rows.set(sample.turn, found[0]);
    }
    const split = samples.flatMap((s) => {
      const row = rows.get(s.turn);
      if (!row) return [];
      const ms = (date) => date.getTime();
      return [
        {
          turn: s.turn,
          total: s.fromSent,
          commit: ms(row.committed) - s.sent,
          open: ms(row.opened) - ms(row.committed),
          lease: ms(row.started) - ms(row.opened),
          prepare: ms(row.requested) - ms(row.started),
          model: s.modelAt - ms(row.requested),
        },
      ];
    });
    return split;
  } finally {
    await client.end();
  }
}
