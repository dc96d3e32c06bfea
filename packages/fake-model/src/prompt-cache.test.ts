import { describe, expect, it } from "vitest";
import { AnthropicPromptCache, OpenAIPromptCache } from "./prompt-cache";

const EPHEMERAL = { type: "ephemeral" };
/** About `tokens` tokens of text (the fake counts four characters a token). */
const filler = (tokens: number, tag: string) => `${tag}${"x".repeat(tokens * 4 - tag.length)}`;

function anthropicBody(turns: string[], options: { ttl?: "1h"; marked?: boolean } = {}) {
  const control = options.ttl ? { ...EPHEMERAL, ttl: options.ttl } : EPHEMERAL;
  const mark = options.marked ?? true;
  return {
    model: "claude-test",
    tools: [
      {
        name: "t",
        description: filler(600, "tool"),
        input_schema: {},
        ...(mark && { cache_control: control }),
      },
    ],
    system: [{ type: "text", text: filler(600, "system"), ...(mark && { cache_control: control }) }],
    messages: turns.map((text, index) => ({
      role: index % 2 === 0 ? "user" : "assistant",
      content: [
        { type: "text", text, ...(mark && index === turns.length - 1 && { cache_control: control }) },
      ],
    })),
  };
}

describe("AnthropicPromptCache", () => {
  it("writes the prefix up to the last breakpoint, then reads it from the next request that extends it", () => {
    let now = 0;
    const cache = new AnthropicPromptCache(() => now);
    const first = cache.use(anthropicBody([filler(100, "u1")]), 1_400);
    expect(first.readTokens).toBe(0);
    expect(first.creationTokens).toBeGreaterThan(1_200);
    now += 60_000;
    const second = cache.use(anthropicBody([filler(100, "u1"), filler(50, "a1"), filler(50, "u2")]), 1_600);
    // The whole first prompt is read (found by looking back from the moved breakpoint); the new turns are written.
    expect(second.readTokens).toBe(first.creationTokens);
    expect(second.creationTokens).toBeGreaterThan(90);
    expect(second.readTokens + second.creationTokens).toBeLessThanOrEqual(1_600);
  });

  it("forgets an entry once its lifetime passed unused, and keeps a one-hour entry that long", () => {
    let now = 0;
    const short = new AnthropicPromptCache(() => now);
    short.use(anthropicBody(["hello"]), 1_300);
    now = 5 * 60_000 + 1;
    expect(short.use(anthropicBody(["hello"]), 1_300).readTokens).toBe(0);

    now = 0;
    const long = new AnthropicPromptCache(() => now);
    const written = long.use(anthropicBody(["hello"], { ttl: "1h" }), 1_300);
    expect(written.creationTtl).toBe("1h");
    now = 59 * 60_000;
    expect(long.use(anthropicBody(["hello"], { ttl: "1h" }), 1_300).readTokens).toBe(written.creationTokens);
  });

  it("caches nothing below the model's minimum, nor a request without breakpoints", () => {
    const cache = new AnthropicPromptCache(() => 0, { minCacheableTokens: () => 4_096 });
    expect(cache.use(anthropicBody(["hello"]), 1_300).creationTokens).toBe(0);
    expect(cache.use(anthropicBody(["hello"]), 1_300).readTokens).toBe(0);
    const unmarked = new AnthropicPromptCache(() => 0);
    unmarked.use(anthropicBody(["hello"], { marked: false }), 1_300);
    expect(unmarked.use(anthropicBody(["hello"], { marked: false }), 1_300)).toEqual({
      readTokens: 0,
      creationTokens: 0,
      creationTtl: "5m",
    });
  });

  it("misses when a byte before the breakpoint changed", () => {
    const cache = new AnthropicPromptCache(() => 0);
    cache.use(anthropicBody(["hello"]), 1_300);
    const changed = anthropicBody(["hello"]);
    changed.system = [{ type: "text", text: filler(600, "SYSTEM"), cache_control: EPHEMERAL }];
    // The tools' breakpoint still hits: only what follows the change is written again.
    const usage = cache.use(changed, 1_300);
    expect(usage.readTokens).toBeLessThan(700);
    expect(usage.creationTokens).toBeGreaterThan(600);
  });
});

describe("OpenAIPromptCache", () => {
  const body = (key: string | undefined, turns: string[]) => ({
    model: "gpt-test",
    ...(key !== undefined && { prompt_cache_key: key }),
    messages: turns.map((content) => ({ role: "user", content })),
  });

  it("counts the prefix a recent prompt with the same key shares, from 1024 tokens in steps of 128", () => {
    const cache = new OpenAIPromptCache(() => 0);
    expect(cache.use(body("s1", [filler(1_500, "a")]), 1_510)).toBe(0);
    const cached = cache.use(body("s1", [filler(1_500, "a"), "next"]), 1_520);
    expect(cached).toBe(1_024 + 3 * 128);
    expect(cache.use(body("s2", [filler(1_500, "a"), "next"]), 1_520)).toBe(0);
  });

  it("caches no prompt shorter than 1024 tokens", () => {
    const cache = new OpenAIPromptCache(() => 0);
    cache.use(body("s", [filler(900, "a")]), 905);
    expect(cache.use(body("s", [filler(900, "a"), "more"]), 910)).toBe(0);
  });
});
