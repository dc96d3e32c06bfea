import { createHash } from "node:crypto";
import { estimateTokens } from "./reply-plan";

/**
 * The providers' prompt caches, as their documentation describes them, so tests and benchmarks see the
 * hit rates a real provider would give the same requests. Token counts use the fake's estimate (four
 * characters a token) of the prompt's canonical form.
 */

/** How a request's input tokens split between the cache and the rest. */
export interface CacheUsage {
  readTokens: number;
  creationTokens: number;
  /** The lifetime the written entries got; what Anthropic reports `cache_creation` under. */
  creationTtl: "5m" | "1h";
}

export const NO_CACHE_USAGE: CacheUsage = { readTokens: 0, creationTokens: 0, creationTtl: "5m" };

const TTL_MS = { "5m": 5 * 60_000, "1h": 60 * 60_000 } as const;
/** Anthropic checks for a hit at block boundaries up to about this many blocks before a breakpoint. */
const LOOKBACK_BLOCKS = 20;

export interface AnthropicCacheOptions {
  /** The shortest prompt prefix, in tokens, the model caches; Anthropic's is 1024 to 4096 by model. */
  minCacheableTokens?: number | ((model: string) => number);
}

interface Boundary {
  /** Hash of the prompt up to and including this block, the cache's key for that prefix. */
  key: string;
  tokens: number;
  /** The block's `cache_control`, when it is a breakpoint. */
  breakpoint: "5m" | "1h" | null;
}

type Json = Record<string, unknown>;

function ttlOf(block: unknown): "5m" | "1h" | null {
  if (typeof block !== "object" || block === null) return null;
  const control = (block as Json).cache_control as Json | undefined;
  if (control?.type !== "ephemeral") return null;
  return control.ttl === "1h" ? "1h" : "5m";
}

function withoutCacheControl(block: unknown): unknown {
  if (typeof block !== "object" || block === null || !("cache_control" in block)) return block;
  const { cache_control: _, ...rest } = block as Json;
  return rest;
}

/**
 * Every content block of an Anthropic request in the order the API reads the prompt (tools, system,
 * messages), each with the hash of the prompt up to it. `cache_control` is not part of a prefix's
 * identity: the breakpoint moves from request to request while the blocks stay the same.
 */
function boundariesOf(body: Json): Boundary[] {
  // `marker` enters the hash only (a block's place: tool, system or a message's role); `text` is what
  // the block counts for, so the prefixes never count more than the prompt's own estimate.
  const blocks: Array<{ marker: string; text: string; control: unknown }> = [];
  const add = (marker: string, block: unknown) => {
    blocks.push({ marker, text: JSON.stringify(withoutCacheControl(block)), control: block });
  };
  for (const tool of (body.tools as unknown[] | undefined) ?? []) add("tool", tool);
  const system = body.system as string | unknown[] | undefined;
  if (typeof system === "string") add("system", system);
  else for (const block of system ?? []) add("system", block);
  for (const message of (body.messages as Json[] | undefined) ?? []) {
    const content = message.content as string | unknown[];
    const pieces = typeof content === "string" ? [content] : content;
    pieces.forEach((block, index) => {
      add(index === 0 ? String(message.role) : "", block);
    });
  }
  const hash = createHash("sha256").update(String(body.model));
  let chars = 0;
  return blocks.map(({ marker, text, control }) => {
    hash.update(`${marker}\n${text}\n`);
    chars += text.length;
    return { key: hash.copy().digest("hex"), tokens: estimateTokens(chars), breakpoint: ttlOf(control) };
  });
}

/**
 * Anthropic's prompt cache: a request's prefix up to a breakpoint is written; a later request whose
 * prompt has that prefix, at a breakpoint or a block boundary shortly before one, within the entry's
 * lifetime, reads it (and a read renews the lifetime). Prefixes shorter than the model's minimum are not
 * cached. Entries live until their lifetime ends on the injected clock.
 */
export class AnthropicPromptCache {
  private readonly entries = new Map<string, { expiresAt: number; ttl: "5m" | "1h" }>();

  constructor(
    private readonly clock: () => number,
    private readonly options: AnthropicCacheOptions = {},
  ) {}

  /** Looks the request up and writes what it asks to cache; `inputTokens` is its whole prompt's count. */
  use(body: Json, inputTokens: number): CacheUsage {
    const boundaries = boundariesOf(body);
    const breakpoints = boundaries.flatMap((boundary, index) => (boundary.breakpoint ? [index] : []));
    const last = breakpoints.at(-1);
    if (last === undefined) return NO_CACHE_USAGE;
    const now = this.clock();
    const minimum = this.minimum(String(body.model));
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);

    let hit: Boundary | undefined;
    for (const index of breakpoints) {
      for (let at = index; at >= Math.max(0, index - LOOKBACK_BLOCKS); at--) {
        const boundary = boundaries[at] as Boundary;
        if ((hit?.tokens ?? 0) >= boundary.tokens) break;
        if (this.entries.has(boundary.key)) {
          hit = boundary;
          break;
        }
      }
    }
    if (hit !== undefined) {
      const entry = this.entries.get(hit.key);
      if (entry) entry.expiresAt = now + TTL_MS[entry.ttl];
    }
    const end = boundaries[last] as Boundary;
    const readTokens = Math.min(hit?.tokens ?? 0, inputTokens);
    if (end.tokens < minimum) return { ...NO_CACHE_USAGE, readTokens };
    for (const index of breakpoints) {
      const boundary = boundaries[index] as Boundary;
      const ttl = boundary.breakpoint ?? "5m";
      if (boundary.tokens >= minimum) this.entries.set(boundary.key, { expiresAt: now + TTL_MS[ttl], ttl });
    }
    const creationTokens = Math.max(0, Math.min(end.tokens, inputTokens) - readTokens);
    return { readTokens, creationTokens, creationTtl: end.breakpoint ?? "5m" };
  }

  private minimum(model: string): number {
    const { minCacheableTokens = 1024 } = this.options;
    return typeof minCacheableTokens === "number" ? minCacheableTokens : minCacheableTokens(model);
  }
}

/** OpenAI caches prompts of at least this many tokens, and counts cached tokens in steps of 128 above it. */
const OPENAI_MIN_TOKENS = 1024;
const OPENAI_STEP_TOKENS = 128;
/** Prompts kept per cache key: enough for the few prefixes one session's requests share. */
const OPENAI_PROMPTS_PER_KEY = 4;

/**
 * OpenAI's automatic prompt cache: requests with the same `prompt_cache_key` (or none) reach the same
 * cache, and the longest prefix a recent prompt shares with this one is cached, counted from 1024 tokens
 * in 128-token steps. Unused prompts leave after five minutes.
 */
export class OpenAIPromptCache {
  private readonly prompts = new Map<string, Array<{ text: string; expiresAt: number }>>();

  constructor(private readonly clock: () => number) {}

  /** The cached share of the request's `promptTokens`, after which the request's prompt is kept. */
  use(body: Json, promptTokens: number): number {
    const key = `${String(body.model)}\n${typeof body.prompt_cache_key === "string" ? body.prompt_cache_key : ""}`;
    const text = JSON.stringify([body.tools ?? [], body.messages ?? []]);
    const now = this.clock();
    const kept = (this.prompts.get(key) ?? []).filter((prompt) => prompt.expiresAt > now);
    let shared = 0;
    for (const prompt of kept) shared = Math.max(shared, commonPrefixLength(prompt.text, text));
    const sharedTokens = Math.min(estimateTokens(shared), promptTokens);
    const cached =
      sharedTokens < OPENAI_MIN_TOKENS
        ? 0
        : OPENAI_MIN_TOKENS +
          Math.floor((sharedTokens - OPENAI_MIN_TOKENS) / OPENAI_STEP_TOKENS) * OPENAI_STEP_TOKENS;
    const expiresAt = now + TTL_MS["5m"];
    this.prompts.set(
      key,
      [{ text, expiresAt }, ...kept.filter((prompt) => prompt.text !== text)].slice(
        0,
        OPENAI_PROMPTS_PER_KEY,
      ),
    );
    return cached;
  }
}

function commonPrefixLength(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  let at = 0;
  while (at < length && a.charCodeAt(at) === b.charCodeAt(at)) at++;
  return at;
}
