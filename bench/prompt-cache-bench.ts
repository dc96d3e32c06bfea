import type { SessionEvent, TokenUsage } from "@wakeloop/contracts";
import { Platform, type RunMode } from "@wakeloop/testing";

/*
 * Issue #29's prompt-caching figures, counted (not timed): one session of a 20-step tool loop through
 * the real platform, its agent speaking the Anthropic protocol to the fake model, whose prompt cache
 * follows Anthropic's documented semantics. Run twice in one go: "before" with the worker's caching
 * off (MODEL_PROMPT_CACHE=off: no cache_control, as the worker sent requests until now) and "after"
 * with it on. For each run:
 * - prefix share: of each request body's bytes, the share equal to a prefix of the previous request's
 *   body (the worst request of the session);
 * - cache-read share: of all input tokens of the session's requests, the share read from the cache;
 * - billed-equivalent input tokens: uncached input + 1.25 × cache writes + 0.1 × cache reads, the
 *   5-minute cache's price ratios.
 */

const STEPS = 20;

export interface PromptCacheRun {
  requests: number;
  /** The lowest prefix share over the session's requests after the first. */
  minPrefixShare: number;
  meanPrefixShare: number;
  /**
   * The same for the bodies in the member order the worker wrote before prompt caching (model,
   * max_tokens, system, stream, messages, tools): the tools after the history, so a request shares
   * with the previous one only what precedes its new turns' place in the messages.
   */
  minPrefixShareOldOrder: number;
  cacheReadShare: number;
  billedInputTokens: number;
  usage: TokenUsage;
}

export interface PromptCacheBench {
  steps: number;
  before: PromptCacheRun;
  after: PromptCacheRun;
  /** before.billedInputTokens / after.billedInputTokens. */
  billedReduction: number;
}

function commonPrefixBytes(a: Buffer, b: Buffer): number {
  const length = Math.min(a.length, b.length);
  let at = 0;
  while (at < length && a[at] === b[at]) at++;
  return at;
}

/** Of each body after the first, the share of its bytes equal to a prefix of the body before it. */
function prefixShares(bodies: Buffer[]): number[] {
  return bodies.slice(1).map((body, index) => commonPrefixBytes(body, bodies[index] as Buffer) / body.length);
}

async function toolSession(cache: "off" | "5m", run: RunMode | undefined): Promise<PromptCacheRun> {
  const platform = await Platform.start({ workers: 1, run, workerEnv: { MODEL_PROMPT_CACHE: cache } });
  try {
    const agent = await platform.create("/v1/agents", {
      name: "prompt cache bench",
      model: platform.fakeModel("anthropic"),
      system: `You are a careful assistant for the operations team. ${"Follow the runbook. ".repeat(100)}`,
    });
    const id = await platform.create("/v1/sessions", { agent });
    for (let step = 1; step < STEPS; step++) {
      platform.fake.enqueue({
        toolCalls: [{ name: "set_state", input: { key: `step-${step}`, value: { done: step } } }],
      });
    }
    platform.fake.enqueue({ text: "All items recorded." });
    const first = platform.fake.requests.length;
    const events = await platform.turn(id, [
      { type: "user.message", content: [{ type: "text", text: "Record each item of the list." }] },
    ]);
    const sent = platform.fake.requests
      .slice(first)
      .filter((request) => request.protocol === "anthropic")
      .map((request) => request.body as Record<string, unknown>);
    const bodies = sent.map((body) => Buffer.from(JSON.stringify(body)));
    const oldOrder = sent.map(({ model, max_tokens, system, stream, messages, tools }) =>
      Buffer.from(JSON.stringify({ model, max_tokens, system, stream, messages, tools })),
    );
    const usages = events.flatMap((event: SessionEvent) =>
      event.type === "span.model_request_end" ? [event.model_usage] : [],
    );
    const sum = (key: keyof TokenUsage) => usages.reduce((total, usage) => total + usage[key], 0);
    const usage: TokenUsage = {
      input_tokens: sum("input_tokens"),
      output_tokens: sum("output_tokens"),
      cache_read_input_tokens: sum("cache_read_input_tokens"),
      cache_creation_input_tokens: sum("cache_creation_input_tokens"),
    };
    const allInput = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
    const shares = prefixShares(bodies);
    return {
      requests: bodies.length,
      minPrefixShare: Math.min(...shares),
      meanPrefixShare: shares.reduce((total, share) => total + share, 0) / shares.length,
      minPrefixShareOldOrder: Math.min(...prefixShares(oldOrder)),
      cacheReadShare: usage.cache_read_input_tokens / allInput,
      billedInputTokens: Math.round(
        usage.input_tokens + 1.25 * usage.cache_creation_input_tokens + 0.1 * usage.cache_read_input_tokens,
      ),
      usage,
    };
  } finally {
    await platform.stop();
  }
}

export async function runPromptCacheBench(options: { run?: RunMode } = {}): Promise<PromptCacheBench> {
  const before = await toolSession("off", options.run);
  const after = await toolSession("5m", options.run);
  return { steps: STEPS, before, after, billedReduction: before.billedInputTokens / after.billedInputTokens };
}
