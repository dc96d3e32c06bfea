import { pathToFileURL } from "node:url";
import { AgentSpec, type EventPayload, type SessionEvent } from "@wakeloop/contracts";
import { initialSessionState } from "@wakeloop/session-core";
import { type LatencySummary, round2, summarize } from "@wakeloop/testing";
import { toAnthropicBody } from "../../../packages/model-providers/src/anthropic-request";
import { estimateTokens } from "../src/context/assemble-context";
import { buildModelRequest, pendingCompaction } from "../src/context/build-request";
import { compactionEvent } from "../src/context/compaction-plan";
import { SessionView } from "../src/session/session-view";
import type { WakeSettings } from "../src/wake-settings";

/*
 * Context compaction (issue #29 item 3):   npx tsx apps/harness-worker/bench/compaction-bench.ts
 * A 500-turn session with large tool outputs (each turn: a user line, a shell call, a 16 kB result, an
 * answer), run twice through the harness's own context code: "before", an agent without
 * `context_management` (older turns fall out of requests only past the model's window), and "after",
 * one with a threshold. Before each request the "after" session compacts as a wake does
 * (`pendingCompaction`, `compactionEvent`; the summary is a fixed 1 kB text instead of a model call,
 * and the event is applied to the view instead of committed). Measured: the largest request against
 * the threshold plus one turn, and at 10 / 100 / 500 turns a new wake's start on another worker (no
 * history cache): the stored events parsed as from Postgres, the view, the conversation and the first
 * request's body, in ms and body bytes.
 */

const settings = {
  globalToolPolicy: {},
  maxSubSessionDepth: 2,
  maxChildrenPerSession: 10,
  webSearch: false,
  browserImages: [],
} as unknown as WakeSettings;

const THRESHOLD = 40_000;
const KEEP = 10_000;
const RESULT_CHARS = 16_000;
const SUMMARY = `Summary of the work so far. ${"The agent ran the checks the user asked for and noted each outcome. ".repeat(14)}`;

function agent(managed: boolean): AgentSpec {
  return AgentSpec.parse({
    name: "bench",
    model: { provider: "anthropic", id: "claude-bench", context_window_tokens: 200_000 },
    system: "You are the operations agent. Follow the runbook.",
    tool_policy: { allow: ["shell_run", "get_state", "set_state"] },
    ...(managed && { context_management: { threshold_tokens: THRESHOLD, keep_recent_tokens: KEEP } }),
  });
}

/** Builds events as the platform stores them: envelope, seq, and JSON round-trippable. */
class Recorder {
  readonly events: SessionEvent[] = [];
  add(payload: EventPayload & { id?: string }): SessionEvent {
    const seq = this.events.length + 1;
    const event = {
      session_id: "sesn_bench",
      processed_at: null,
      created_at: "2026-12-06T00:00:00.000Z",
      ...payload,
      id: payload.id ?? `sevt_${seq}`,
      seq,
    } as SessionEvent;
    this.events.push(event);
    return event;
  }
}

/** A wake's view: the session row's state (`state`, the projection) and its history. */
function newView(
  spec: AgentSpec,
  events: SessionEvent[],
  state = initialSessionState({ title: null, metadata: {}, budget: { max_total_tokens: null } }),
): SessionView {
  return new SessionView({
    tenantId: "tnt_bench",
    sessionId: "sesn_bench",
    agentId: "agt_bench",
    agent: spec,
    environment: null,
    parentSessionId: null,
    depth: 0,
    state,
    events,
  });
}

/** What a request would carry: its estimate and its body. */
function measureRequest(view: SessionView): { tokens: number; bytes: number } {
  const { request } = buildModelRequest(view, settings);
  const tokens =
    estimateTokens(request.system) +
    estimateTokens(request.tools) +
    request.messages.reduce((sum, message) => sum + estimateTokens(message), 0);
  return { tokens: Math.round(tokens), bytes: toAnthropicBody(request).byteLength };
}

/** Compacts before a request when the view's agent says so, as `compactContext` does; true when it did. */
function compactBeforeRequest(view: SessionView, recorder: Recorder): boolean {
  const pending = pendingCompaction(view, settings);
  if (pending === null) return false;
  const summary = pending.plan.strategy === "summary" ? { text: SUMMARY, model: "claude-bench" } : null;
  const draft = compactionEvent(pending.plan, summary, { before: pending.tokensBefore, after: 0 });
  const payload = compactionEvent(pending.plan, summary, {
    before: pending.tokensBefore,
    after: pending.tokensAfter(draft),
  });
  view.apply([recorder.add(payload)]);
  return true;
}

export interface CompactionVariant {
  compactions: number;
  /** The largest request's estimate (tokens) and body. */
  maxRequestTokens: number;
  maxRequestBytes: number;
  /** A new wake's start at each checkpoint: ms (p50/p95/p99) and the first request's body bytes. */
  wakeStart: Array<{ turns: number; events: number; ms: LatencySummary; bytes: number }>;
}

export interface CompactionBenchResult {
  turns: number;
  threshold: number;
  /** The most one turn adds, by the same estimate: the allowance over the threshold. */
  turnTokens: number;
  before: CompactionVariant;
  after: CompactionVariant;
}

function runVariant(
  managed: boolean,
  turns: number,
  checkpoints: readonly number[],
  samples: number,
): { variant: CompactionVariant; turnTokens: number } {
  const spec = agent(managed);
  const recorder = new Recorder();
  const view = newView(spec, []);
  let compactions = 0;
  let maxRequestTokens = 0;
  let maxRequestBytes = 0;
  let turnTokens = 0;
  const wakeStart: CompactionVariant["wakeStart"] = [];
  const request = () => {
    if (compactBeforeRequest(view, recorder)) compactions += 1;
    const measured = measureRequest(view);
    maxRequestTokens = Math.max(maxRequestTokens, measured.tokens);
    maxRequestBytes = Math.max(maxRequestBytes, measured.bytes);
    view.apply([recorder.add({ type: "span.model_request_start", model: "claude-bench" })]);
  };
  for (let turn = 1; turn <= turns; turn++) {
    const first = recorder.events.length;
    view.apply([
      recorder.add({ type: "user.message", content: [{ type: "text", text: `Check host ${turn}.` }] }),
    ]);
    request();
    const call = recorder.add({
      type: "agent.tool_use",
      name: "shell_run",
      input: { command: `journalctl -u app --host h${turn}` },
      evaluated_permission: "allow",
    });
    view.apply([call]);
    const output = `${`host h${turn} log line: request served in 12 ms, status 200\n`.repeat(RESULT_CHARS / 52)}`;
    view.apply([
      recorder.add({
        type: "agent.tool_result",
        tool_use_id: call.id,
        content: [{ type: "text", text: output.slice(0, RESULT_CHARS) }],
        is_error: false,
      }),
    ]);
    request();
    view.apply([
      recorder.add({ type: "agent.message", content: [{ type: "text", text: `Host ${turn} is healthy.` }] }),
    ]);
    const added = recorder.events.slice(first).filter((event) => event.type !== "session.compaction");
    turnTokens = Math.max(
      turnTokens,
      estimateTokens(added.map((event) => ("content" in event ? event.content : event))),
    );
    if (checkpoints.includes(turn)) {
      // The rows as a new wake on another worker reads them: JSON text, parsed, then the conversation.
      const stored = recorder.events.map((event) => JSON.stringify(event));
      const times: number[] = [];
      let bytes = 0;
      // One start first, not counted: the first wake of a variant pays for compiling its code path.
      for (let sample = -1; sample < samples; sample++) {
        const started = performance.now();
        const events = stored.map((row) => JSON.parse(row) as SessionEvent);
        bytes = measureRequest(newView(agent(managed), events, view.state)).bytes;
        if (sample >= 0) times.push(performance.now() - started);
      }
      wakeStart.push({ turns: turn, events: stored.length, ms: summarize(times), bytes });
    }
  }
  return { variant: { compactions, maxRequestTokens, maxRequestBytes, wakeStart }, turnTokens };
}

export function runCompactionBench({
  turns = 500,
  checkpoints = [10, 100, 500],
  samples = 10,
} = {}): CompactionBenchResult {
  const before = runVariant(false, turns, checkpoints, samples);
  const after = runVariant(true, turns, checkpoints, samples);
  return {
    turns,
    threshold: THRESHOLD,
    turnTokens: after.turnTokens,
    before: before.variant,
    after: after.variant,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const result = runCompactionBench();
  for (const [name, variant] of [
    ["before", result.before],
    ["after", result.after],
  ] as const) {
    console.log(
      `${name}: ${variant.compactions} compactions, largest request ${variant.maxRequestTokens} tokens / ${variant.maxRequestBytes} bytes (threshold ${result.threshold} + one turn ${result.turnTokens})`,
    );
    for (const point of variant.wakeStart)
      console.log(
        `  ${point.turns} turns (${point.events} events): wake start p50 ${round2(point.ms.p50)} ms, ${point.bytes} bytes`,
      );
  }
}
