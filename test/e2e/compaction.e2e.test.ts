import type { SessionEvent } from "@wakeloop/contracts";
import type { FakeRequestView, RecordedRequest } from "@wakeloop/fake-model";
import { Platform } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Context compaction (docs/context-management.md) through the public API: every service its own
// process, two harness workers, the fake model speaking the OpenAI and Anthropic streaming wire formats.
// Each test has its own agent, whose model id names the test's requests at the fake.

let platform: Platform;
/** The operator's `llm_generate` "low" model, which agents with `summary_model: "low"` summarise with. */
const SUMMARY_MODEL = "fake-summary-low";

beforeAll(async () => {
  platform = await Platform.start({
    workers: 2,
    env: { LEASE_SWEEP_INTERVAL_MS: "200", WAKE_REPUBLISH_AFTER_MS: "2000" },
    workerEnv: {
      LEASE_TTL_MS: "1500",
      MODEL_RETRY_BASE_MS: "20",
      MODEL_RETRY_MAX_MS: "50",
      LLM_MODEL_LOW: SUMMARY_MODEL,
    },
  });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

type Provider = "openai_compatible" | "anthropic";

async function agent(provider: Provider, modelId: string, contextManagement: Record<string, unknown>) {
  return platform.createAgent({
    model: { ...platform.fakeModel(provider), id: modelId },
    tool_policy: { allow: ["get_state", "set_state"] },
    loop_detection: { enabled: false },
    context_management: contextManagement,
  });
}

async function session(agentId: string): Promise<string> {
  return platform.create("/v1/sessions", { agent: agentId });
}

const say = (text: string) => ({ type: "user.message", content: [{ type: "text", text }] });

/** This test's requests at the fake (by model id): the session's own, and the summary requests. */
function requestsOf(modelId: string): { own: RecordedRequest[]; summaries: RecordedRequest[] } {
  const mine = platform.fake.requests.filter((request) => request.view?.model === modelId);
  return {
    own: mine.filter((request) => !request.view?.summaryRequest),
    summaries: mine.filter((request) => request.view?.summaryRequest),
  };
}

/** A scripted turn for the test's own requests (not its summary requests). */
const ownOf = (modelId: string) => (request: FakeRequestView) =>
  request.model === modelId && !request.summaryRequest;

/** Every event once, seqs gapless from 1. */
function expectWellFormed(events: SessionEvent[]) {
  expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
  expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
}

type OpenAIMessage = {
  role: string;
  content?: string | null | Array<{ type: string; text?: string }>;
  tool_calls?: Array<{ id: string }>;
  tool_call_id?: string;
};
type AnthropicBlock = { type: string; text?: string; id?: string; tool_use_id?: string; content?: unknown };
type AnthropicMessage = { role: string; content: string | AnthropicBlock[] };

/** Each call of a request has its result right after its assistant turn, and every result its call. */
function expectPairsIntact(request: RecordedRequest) {
  if (request.protocol === "openai") {
    const messages = (request.body as { messages: OpenAIMessage[] }).messages;
    messages.forEach((message, index) => {
      const calls = (message.tool_calls ?? []).map((call) => call.id);
      const answered = messages
        .slice(index + 1, index + 1 + calls.length)
        .map((next) => (next.role === "tool" ? next.tool_call_id : null));
      expect(answered).toEqual(calls);
      if (message.role === "tool") {
        const owner = messages.slice(0, index).findLast((m) => m.role === "assistant");
        expect(owner?.tool_calls?.map((call) => call.id)).toContain(message.tool_call_id);
      }
    });
    return;
  }
  const messages = (request.body as { messages: AnthropicMessage[] }).messages;
  messages.forEach((message, index) => {
    if (typeof message.content === "string") return;
    const uses = message.content.filter((block) => block.type === "tool_use").map((block) => block.id);
    const next = messages[index + 1];
    const results =
      uses.length === 0 || next === undefined || typeof next.content === "string"
        ? []
        : next.content.filter((block) => block.type === "tool_result").map((block) => block.tool_use_id);
    expect(results).toEqual(uses);
  });
  expect((messages[0] as AnthropicMessage).role).toBe("user");
}

/** The text a request carries, to look for what it holds and what it no longer does. */
const bodyText = (request: RecordedRequest | undefined) => JSON.stringify(request?.body ?? null);

describe("context compaction", () => {
  it("clears older tool results first, then summarises; the events API keeps everything (OpenAI)", async () => {
    const modelId = "fake-compact-openai";
    const threshold = 6_000;
    const agentId = await agent("openai_compatible", modelId, {
      threshold_tokens: threshold,
      keep_recent_tokens: 2_500,
    });
    const id = await session(agentId);
    const mine = ownOf(modelId);
    const blob = (tag: string) => `${tag}:${"y".repeat(8_000)}`; // ~2 000 tokens
    // Turn 1: four reads of a big value (large tool results), then an answer.
    platform.fake.enqueue(
      {
        match: mine,
        toolCalls: [{ name: "set_state", input: { key: "blob", value: blob("v1") } }],
      },
      ...Array.from({ length: 4 }, () => ({
        match: mine,
        toolCalls: [{ name: "get_state", input: { key: "blob" } }],
      })),
      { match: mine, text: "read it four times" },
    );
    await platform.turn(id, [say("read the blob")]);
    let events = await platform.events(id);
    const cleared = events.find((event) => event.type === "session.compaction");
    expect(cleared).toMatchObject({ strategy: "clear_tool_results", summary: null, model: null });
    if (cleared?.type !== "session.compaction") return;
    expect(cleared.cleared_tool_results.length).toBeGreaterThan(0);
    expect(cleared.cleared_tool_results[0]).toMatchObject({ name: "get_state" });
    expect(cleared.tokens_before).toBeGreaterThan(threshold);
    expect(cleared.tokens_after).toBeLessThanOrEqual(threshold);
    // The request after it carries the stub in place of each cleared result, and every pair whole.
    const after = requestsOf(modelId).own.at(-1);
    const firstCleared = cleared.cleared_tool_results[0]?.tool_use_id as string;
    expect(bodyText(after)).toContain("[Result of get_state cleared to save context");
    const stubbed = ((after as RecordedRequest).body as { messages: OpenAIMessage[] }).messages.find(
      (message) => message.tool_call_id === firstCleared,
    );
    expect(JSON.stringify(stubbed)).not.toContain("yyyy");
    for (const request of requestsOf(modelId).own) expectPairsIntact(request);

    // Turn 2: big values written (tool inputs, which clearing cannot shrink): a summary it is.
    platform.fake.enqueue(
      ...["v2", "v3", "v4"].map((tag) => ({
        match: mine,
        toolCalls: [{ name: "set_state", input: { key: tag, value: blob(tag) } }],
      })),
      { match: mine, text: "stored three" },
    );
    await platform.turn(id, [say("store three more")]);
    events = await platform.events(id);
    const summary = events.find(
      (event) => event.type === "session.compaction" && event.strategy === "summary",
    );
    expect(summary).toMatchObject({ model: modelId });
    if (summary?.type !== "session.compaction") return;
    expect(summary.summary).toMatch(/^Fake summary of \d+ transcript lines/);
    expect(summary.tokens_after).toBeLessThan(summary.tokens_before);
    const { own, summaries } = requestsOf(modelId);
    expect(summaries.length).toBeGreaterThanOrEqual(1);
    // The first request after the summary opens with it and holds only what came after its range.
    const next = own.find((request) => bodyText(request).includes(summary.summary as string));
    const messages = ((next as RecordedRequest).body as { messages: OpenAIMessage[] }).messages;
    expect(messages[1]?.role).toBe("user");
    expect(JSON.stringify(messages[1])).toContain(`events 1–${summary.replaces.to_seq}`);
    expect(bodyText(next)).not.toContain(`v1:${"y".repeat(100)}`);
    for (const request of own) expectPairsIntact(request);
    // Every request after the first compaction stayed under the threshold plus one turn (~2 000 tokens).
    const limitChars = (threshold + 2_500) * 4;
    for (const request of own)
      expect(JSON.stringify((request.body as { messages: unknown }).messages).length).toBeLessThan(
        limitChars,
      );

    // The events API still returns the whole history, the cleared results and the summarised turn included.
    expectWellFormed(events);
    const results = events.filter((event) => event.type === "agent.tool_result");
    expect(results).toHaveLength(8);
    expect(JSON.stringify(results.find((event) => event.tool_use_id === firstCleared))).toContain(
      "y".repeat(8_000),
    );
    expect(events[0]).toMatchObject({ type: "user.message" });
  }, 120_000);

  it("sends the summary, written by the operator's llm_generate tier, and the kept turns in the Anthropic format", async () => {
    const modelId = "fake-compact-claude";
    const agentId = await agent("anthropic", modelId, {
      threshold_tokens: 4_000,
      keep_recent_tokens: 3_500,
      clear_tool_results: false,
      summary_model: "low",
    });
    const id = await session(agentId);
    // ~3 000 tokens each; the fake's summary names the last user line, the tag, not the filler.
    await platform.turn(id, [say(`first\n${"q".repeat(12_000)}`)]);
    await platform.turn(id, [say(`second\n${"z".repeat(12_000)}`)]);
    const events = await platform.events(id);
    const compaction = events.find((event) => event.type === "session.compaction");
    expect(compaction).toMatchObject({
      strategy: "summary",
      replaces: { from_seq: 1 },
      model: SUMMARY_MODEL,
    });
    if (compaction?.type !== "session.compaction") return;
    const { own } = requestsOf(modelId);
    const summaries = requestsOf(SUMMARY_MODEL).summaries;
    expect(summaries).toHaveLength(1);
    expect(summaries[0]?.protocol).toBe("anthropic");
    expect(bodyText(summaries[0])).toContain("user: first");
    const last = own.at(-1) as RecordedRequest;
    const messages = (last.body as { messages: AnthropicMessage[] }).messages;
    expect(JSON.stringify(messages[0])).toContain(compaction.summary as string);
    expect(bodyText(last)).not.toContain("qqqqqqqq");
    expect(bodyText(last)).toContain("zzzzzzzz");
    expectPairsIntact(last);
    expectWellFormed(events);
    expect(JSON.stringify(events)).toContain("q".repeat(12_000));
  }, 60_000);

  it("re-runs a compaction whose worker was killed mid-summary, leaving one compaction and no half state", async () => {
    const modelId = "fake-compact-crash";
    const agentId = await agent("openai_compatible", modelId, {
      threshold_tokens: 4_000,
      keep_recent_tokens: 3_500,
      clear_tool_results: false,
    });
    const id = await session(agentId);
    await platform.turn(id, [say(`first\n${"p".repeat(12_000)}`)]);
    // The first summary request hangs; the second is answered by the fake's summary.
    platform.fake.enqueue({
      match: (r) => r.model === modelId && r.summaryRequest,
      text: "never finished",
      delayMs: 20_000,
    });
    const before = (await platform.events(id)).at(-1)?.seq ?? 0;
    await platform.send(id, say(`second\n${"w".repeat(12_000)}`));
    await expect.poll(() => requestsOf(modelId).summaries.length, { timeout: 30_000 }).toBe(1);
    const worker = await platform.wakeWorker(id);
    const victim = platform.app(worker);
    victim.kill("SIGKILL");
    await victim.exited;
    // Nothing of the compaction was committed by the killed wake.
    expect((await platform.events(id)).filter((event) => event.type === "session.compaction")).toHaveLength(
      0,
    );
    await platform.waitForIdle(id, "end_turn", before, 60_000);
    const events = await platform.events(id);
    expectWellFormed(events);
    expect(events.map((event) => event.type)).toContain("session.status_rescheduled");
    const compactions = events.filter((event) => event.type === "session.compaction");
    expect(compactions).toHaveLength(1);
    expect(compactions[0]).toMatchObject({
      strategy: "summary",
      summary: expect.stringMatching(/^Fake summary/),
    });
    expect(requestsOf(modelId).summaries).toHaveLength(2);
    const last = requestsOf(modelId).own.at(-1);
    expect(bodyText(last)).toContain("Fake summary");
    expect(bodyText(last)).not.toContain("pppppppp");
    await platform.startWorker(worker);
  }, 120_000);

  it("refuses a threshold past the model's window and a kept tail as large as the threshold (400)", async () => {
    const model = { ...platform.fakeModel(), context_window_tokens: 10_000, max_output_tokens: 1_000 };
    const tooLarge = await platform.request("POST", "/v1/agents", {
      name: "e2e",
      model,
      context_management: { threshold_tokens: 9_500 },
    });
    expect(tooLarge.status).toBe(400);
    expect(JSON.stringify(tooLarge.body)).toContain("threshold_tokens");
    const keepsAll = await platform.request("POST", "/v1/agents", {
      name: "e2e",
      model,
      context_management: { threshold_tokens: 5_000, keep_recent_tokens: 5_000 },
    });
    expect(keepsAll.status).toBe(400);
    expect(JSON.stringify(keepsAll.body)).toContain("keep_recent_tokens");
  });
});
