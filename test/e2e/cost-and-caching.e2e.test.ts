import { costOf, type ModelPrice, type SessionEvent, type TokenUsage } from "@wakeloop/contracts";
import { Platform } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Prompt caching and cost through the public API, against the fake model speaking the Anthropic and
// OpenAI streaming wire formats with the providers' cache semantics: the session's second step and
// second wake read the cache, usage and cost are recorded per step, wake and session, and a money
// budget stops a session like a token budget.

const PRICES: Record<string, ModelPrice> = {
  "fake-claude": { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 },
  "fake-gpt": { input: 2, output: 8, cache_read: 0.5, cache_write: 0 },
};

let platform: Platform;

beforeAll(async () => {
  platform = await Platform.start({
    workers: 1,
    workerEnv: { MODEL_PRICES: JSON.stringify(PRICES), MODEL_PROMPT_CACHE: "5m" },
  });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

// Long enough (about 1 500 tokens by the fake's count) that the system prompt alone passes every
// provider's smallest cacheable prefix.
const SYSTEM = "You are a careful test agent. Check each answer twice before you give it. ".repeat(80);
const say = (text: string) => ({ type: "user.message", content: [{ type: "text", text }] });

type Ended = Extract<SessionEvent, { type: "span.model_request_end" }>;
type Usage = Extract<SessionEvent, { type: "session.usage" }>;
const requestUsages = (events: SessionEvent[]) =>
  events.filter((event): event is Ended => event.type === "span.model_request_end").map((e) => e.model_usage);
const usageEvents = (events: SessionEvent[]) =>
  events.filter((event): event is Usage => event.type === "session.usage");

/** The fake model as an `openai` agent's model: OpenAI's API at the fake's address. */
const openaiModel = () => ({ provider: "openai", id: "fake-gpt", base_url: `${platform.fake.url}/v1` });

/** A session of a new agent on `provider` whose first wake makes two requests (a tool call, then text). */
async function twoWakes(provider: "anthropic" | "openai" | "openai_compatible", modelId?: string) {
  const model = {
    ...(provider === "openai" ? openaiModel() : platform.fakeModel(provider)),
    ...(modelId && { id: modelId }),
  };
  const agent = await platform.create("/v1/agents", { name: `cache ${provider}`, model, system: SYSTEM });
  const id = await platform.create("/v1/sessions", { agent });
  platform.fake.enqueue(
    { toolCalls: [{ name: "get_state", input: { key: "color" } }] },
    { text: "No keys yet." },
  );
  const first = await platform.turn(id, [say("Which keys do you keep?")]);
  platform.fake.enqueue({ text: "Still none." });
  const second = await platform.turn(id, [say("And now?")]);
  return { id, first, second };
}

function expectCostsOf(usages: TokenUsage[], events: Usage[], price: ModelPrice, sessionBefore = 0) {
  const steps = usages.map((usage) => costOf(usage, price) as number);
  expect(events.map((event) => event.cost?.step_micro_usd)).toEqual(steps);
  let wake = 0;
  events.forEach((event, index) => {
    wake += steps[index] as number;
    expect(event.cost?.wake_micro_usd).toBe(wake);
    expect(event.cost?.session_micro_usd).toBe(sessionBefore + wake);
  });
  return sessionBefore + wake;
}

describe("prompt caching and cost", () => {
  it("Anthropic: the second step and the second wake read the cache; each step, wake and session is priced", async () => {
    const { id, first, second } = await twoWakes("anthropic");
    const sent = platform.fake.requests.filter((request) => request.protocol === "anthropic").slice(-3);
    for (const request of sent) {
      const body = request.body as { system: Array<{ cache_control?: unknown }> };
      expect(body.system[0]?.cache_control).toEqual({ type: "ephemeral" });
    }
    const [step1, step2] = requestUsages(first);
    const [wake2] = requestUsages(second);
    expect(step1?.cache_read_input_tokens).toBe(0);
    expect(step1?.cache_creation_input_tokens).toBeGreaterThan(1_000);
    // The second step reads everything the first wrote; the next wake reads all of the second step's prompt.
    expect(step2?.cache_read_input_tokens).toBe(step1?.cache_creation_input_tokens);
    expect(wake2?.cache_read_input_tokens).toBe(
      (step2?.cache_read_input_tokens ?? 0) + (step2?.cache_creation_input_tokens ?? 0),
    );
    expect(wake2?.input_tokens).toBeLessThan(wake2?.cache_read_input_tokens ?? 0);

    const price = PRICES["fake-claude"] as ModelPrice;
    const afterFirst = expectCostsOf([step1, step2] as TokenUsage[], usageEvents(first), price);
    const total = expectCostsOf([wake2] as TokenUsage[], usageEvents(second), price, afterFirst);
    const session = await platform.request("GET", `/v1/sessions/${id}`);
    expect(session.body.cost_micro_usd).toBe(total);
    expect(session.body.usage.cache_read_input_tokens).toBe(
      (step2?.cache_read_input_tokens ?? 0) + (wake2?.cache_read_input_tokens ?? 0),
    );

    // The worker's metrics count the cache's tokens and the cost (this is the file's first fake-claude session).
    const scrape = await platform.metrics("worker-1");
    const model = { gen_ai_request_model: "fake-claude" };
    const cacheTokens = (type: string) =>
      scrape.value("wakeloop_model_cache_tokens_total", { ...model, gen_ai_token_type: type });
    expect(cacheTokens("cache_read")).toBe(session.body.usage.cache_read_input_tokens);
    expect(cacheTokens("cache_creation")).toBe(session.body.usage.cache_creation_input_tokens);
    expect(scrape.value("wakeloop_model_cost_micro_usd_total", model)).toBe(total);

    // The chat spans carry the cache's share of the input, per the GenAI semantic conventions.
    type Span = { name: string; attributes: Record<string, unknown>; children: Span[] };
    const chats = async () => {
      const trace = await platform.request("GET", `/v1/sessions/${id}/trace`);
      const roots = (trace.body.data ?? []).flatMap((wake: { spans: Span[] }) => wake.spans) as Span[];
      const all = (spans: Span[]): Span[] => spans.flatMap((span) => [span, ...all(span.children)]);
      return all(roots).filter((span) => span.name === "chat fake-claude");
    };
    await expect.poll(async () => (await chats()).length, { timeout: 10_000 }).toBe(3);
    const attributes = (await chats()).map((span) => span.attributes);
    expect(attributes).toContainEqual(
      expect.objectContaining({
        "gen_ai.usage.cache_read.input_tokens": wake2?.cache_read_input_tokens,
        "gen_ai.usage.cache_creation.input_tokens": wake2?.cache_creation_input_tokens,
        "gen_ai.usage.input_tokens":
          (wake2?.input_tokens ?? 0) +
          (wake2?.cache_read_input_tokens ?? 0) +
          (wake2?.cache_creation_input_tokens ?? 0),
      }),
    );
  });

  it("OpenAI: requests carry the session's prompt_cache_key and later ones report cached tokens", async () => {
    const { id, first, second } = await twoWakes("openai");
    const keys = platform.fake.requests
      .filter((request) => request.protocol === "openai")
      .slice(-3)
      .map((request) => (request.body as { prompt_cache_key?: string }).prompt_cache_key);
    expect(keys).toEqual([id, id, id]);
    const [step1, step2] = requestUsages(first);
    const [wake2] = requestUsages(second);
    expect(step1?.cache_read_input_tokens).toBe(0);
    expect(step2?.cache_read_input_tokens).toBeGreaterThanOrEqual(1_024);
    // Counted in steps of 128 tokens: the few tokens the first wake's end added may not reach the next.
    expect(wake2?.cache_read_input_tokens).toBeGreaterThanOrEqual(step2?.cache_read_input_tokens ?? 0);
    const price = PRICES["fake-gpt"] as ModelPrice;
    const afterFirst = expectCostsOf([step1, step2] as TokenUsage[], usageEvents(first), price);
    const total = expectCostsOf([wake2] as TokenUsage[], usageEvents(second), price, afterFirst);
    expect((await platform.request("GET", `/v1/sessions/${id}`)).body.cost_micro_usd).toBe(total);
  });

  it("sends no prompt_cache_key to an OpenAI-compatible server, which caches prefixes on its own", async () => {
    const before = platform.fake.requests.length;
    const { first } = await twoWakes("openai_compatible");
    const bodies = platform.fake.requests.slice(before).filter((request) => request.protocol === "openai");
    expect(bodies).toHaveLength(3);
    for (const request of bodies) expect(request.body).not.toHaveProperty("prompt_cache_key");
    // The fake keeps keyless requests together, as a server with prefix caching would.
    expect(requestUsages(first)[1]?.cache_read_input_tokens).toBeGreaterThanOrEqual(1_024);
  });

  it("reports the cost of a model without a price as unknown, not as free", async () => {
    const { id, first } = await twoWakes("anthropic", "fake-unpriced");
    expect(usageEvents(first).map((event) => event.cost)).toEqual([
      { step_micro_usd: null, wake_micro_usd: null, session_micro_usd: null },
      { step_micro_usd: null, wake_micro_usd: null, session_micro_usd: null },
    ]);
    expect((await platform.request("GET", `/v1/sessions/${id}`)).body.cost_micro_usd).toBeNull();
  });

  it("stops a session at its money budget with budget_reached, and goes on when the budget is raised", async () => {
    const agent = await platform.create("/v1/agents", {
      name: "money budget",
      model: platform.fakeModel("anthropic"),
      system: SYSTEM,
    });
    // The first request alone costs more than a hundredth of a cent, even with its tools and system
    // prompt read from the cache the earlier sessions of this model wrote (about 1 600 tokens at $0.30
    // a million).
    const budget = { max_total_tokens: null, max_cost_micro_usd: 100 };
    const id = await platform.create("/v1/sessions", { agent, budget });
    platform.fake.enqueue({ toolCalls: [{ name: "get_state", input: { key: "color" } }] });
    const events = await platform.turn(id, [say("Loop on the state.")], "budget_reached");
    expect(requestUsages(events)).toHaveLength(1);
    const session = await platform.request("GET", `/v1/sessions/${id}`);
    expect(session.body.cost_micro_usd).toBeGreaterThanOrEqual(100);
    expect(session.body.budget).toEqual(budget);

    platform.fake.enqueue({ text: "Done." });
    const raised = { max_total_tokens: null, max_cost_micro_usd: 1_000_000 };
    const before = (await platform.events(id)).at(-1)?.seq ?? 0;
    const updated = await platform.request("POST", `/v1/sessions/${id}`, { budget: raised });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    await platform.waitForIdle(id, "end_turn", before);
  });
});
