import { type CacheUsage, NO_CACHE_USAGE } from "./prompt-cache";
import type { FakeRequestView } from "./request-view";
import type { ResolvedTurn, ScriptUsage } from "./script";

export type SuccessTurn = Exclude<ResolvedTurn, { error: unknown }>;

export interface PlannedToolCall {
  id: string;
  name: string;
  /** The full arguments text; `argumentChunks` joined. */
  arguments: string;
  argumentChunks: string[];
}

/** A successful answer in protocol-neutral form; each protocol renders it in its own wire format. */
export interface ReplyPlan {
  textChunks: string[];
  toolCalls: PlannedToolCall[];
  stopReason: "end_turn" | "max_tokens" | "tool_use";
  /** `input_tokens` is the whole prompt's; `cache` says how much of it the provider's cache served or took. */
  usage: ScriptUsage;
  cache: CacheUsage;
  chunkDelayMs: number;
}

/** One write of an event stream. Output frames (text or argument pieces) are paced by `chunkDelayMs`. */
export interface StreamFrame {
  text: string;
  output: boolean;
}

/** An error a stream breaks off with after it has started. */
export interface StreamFailure {
  type: string;
  message: string;
}

const CHARS_PER_TOKEN = 4;

/** Deterministic, so tests and benchmarks can assert exact usage without scripting it. */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

function wordChunks(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/** Three pieces, so every scripted call exercises argument reassembly on the client. */
function thirds(text: string): string[] {
  const size = Math.max(1, Math.ceil(text.length / 3));
  const pieces: string[] = [];
  for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size));
  return pieces.length > 0 ? pieces : [""];
}

/** The plan of `turn`'s answer; `cacheOf` splits the prompt's tokens by what the prompt cache did. */
export function planReply(
  turn: SuccessTurn,
  view: FakeRequestView,
  idPrefix: string,
  cacheOf: (inputTokens: number) => CacheUsage,
): ReplyPlan {
  const text = turn.text ?? "";
  const textChunks = "chunks" in turn && turn.chunks !== undefined ? turn.chunks : wordChunks(text);
  const calls = "toolCalls" in turn ? turn.toolCalls : [];
  const toolCalls = calls.map((call, index) => {
    const args = call.rawInput ?? JSON.stringify(call.input);
    return {
      id: call.id ?? `${idPrefix}${index + 1}`,
      name: call.name,
      arguments: args,
      argumentChunks: thirds(args),
    };
  });
  const outputChars =
    textChunks.join("").length + toolCalls.reduce((n, call) => n + call.arguments.length, 0);
  const stopReason =
    toolCalls.length > 0 ? "tool_use" : "stopReason" in turn ? (turn.stopReason ?? "end_turn") : "end_turn";
  const usage = turn.usage ?? {
    input_tokens: estimateTokens(view.promptChars),
    output_tokens: Math.max(1, estimateTokens(outputChars)),
  };
  return {
    textChunks,
    toolCalls,
    stopReason,
    usage,
    // A scripted usage is the whole report: the prompt cache neither serves nor takes any of it.
    cache: turn.usage === undefined ? cacheOf(usage.input_tokens) : NO_CACHE_USAGE,
    chunkDelayMs: turn.chunkDelayMs ?? 0,
  };
}
