import { z } from "zod";
import type { FakeRequestView } from "./request-view";

/**
 * Token counts a turn reports; when a turn gives none, the server estimates them and its prompt cache
 * splits the input (a scripted usage reports no cache reads or writes).
 */
export const ScriptUsage = z.object({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
});
export type ScriptUsage = z.infer<typeof ScriptUsage>;

const timing = {
  /** Wait before the response starts (status line and headers). */
  delayMs: z.number().nonnegative().optional(),
  /** Wait between streamed frames. */
  chunkDelayMs: z.number().nonnegative().optional(),
};

export const ScriptToolCall = z.object({
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()).default({}),
  id: z.string().min(1).optional(),
  /** Sent verbatim as the arguments text instead of `input`, to script malformed JSON. */
  rawInput: z.string().optional(),
});
export type ScriptToolCall = z.input<typeof ScriptToolCall>;

export const TextTurn = z.object({
  text: z.string(),
  /** How the text is split on the wire; defaults to one chunk per word. */
  chunks: z.array(z.string()).optional(),
  stopReason: z.enum(["end_turn", "max_tokens"]).optional(),
  usage: ScriptUsage.optional(),
  ...timing,
});

export const ToolCallTurn = z.object({
  toolCalls: z.array(ScriptToolCall).min(1),
  /** Text streamed before the tool calls. */
  text: z.string().optional(),
  usage: ScriptUsage.optional(),
  ...timing,
});

export const ErrorTurn = z.object({
  error: z.object({
    status: z.number().int().min(400).max(599),
    type: z.string().min(1),
    message: z.string(),
    retryAfterSeconds: z.number().nonnegative().optional(),
  }),
  /**
   * Streaming requests only: answer 200, stream this text, then fail with an error event mid-stream,
   * as providers do when they overload during generation. Non-streaming requests get the HTTP error.
   */
  afterText: z.string().optional(),
  ...timing,
});

export const TurnData = z.union([ErrorTurn, ToolCallTurn, TextTurn]);
/** A turn after validation, with defaults applied: what the protocol renderers take. */
export type ResolvedTurn = z.output<typeof TurnData>;

type Matchable = { match?: (request: FakeRequestView) => boolean };
export type TextTurn = z.input<typeof TextTurn> & Matchable;
export type ToolCallTurn = z.input<typeof ToolCallTurn> & Matchable;
export type ErrorTurn = z.input<typeof ErrorTurn> & Matchable;
export type Turn = TextTurn | ToolCallTurn | ErrorTurn;

export type DefaultTurn = Turn | ((request: FakeRequestView) => Turn);

/**
 * What the server answers. `turns` is a queue: each request takes the first turn whose `match`
 * accepts it (a turn without `match` accepts anything). With no such turn, `defaultTurn` answers.
 */
export interface Script {
  turns?: Turn[];
  defaultTurn?: DefaultTurn;
}

/** The JSON form of a script, as a file the CLI can load (no `match` functions). */
export const ScriptFile = z.object({
  turns: z.array(TurnData).default([]),
  defaultTurn: TurnData.optional(),
});

export const OK_TURN: TextTurn = { text: "ok" };

/**
 * Takes the answering turn out of `queue` (mutating it) or falls back to the default. A summary
 * request (context compaction) is answered by a turn whose `match` accepts it, else by `summaryTurn`:
 * a script written for a session's own requests is not consumed by its compactions.
 */
export function takeTurn(queue: Turn[], defaultTurn: DefaultTurn, request: FakeRequestView): Turn {
  const index = queue.findIndex((turn) =>
    turn.match === undefined ? !request.summaryRequest : turn.match(request),
  );
  if (index >= 0) return queue.splice(index, 1)[0] as Turn;
  if (request.summaryRequest) return summaryTurn(request);
  return typeof defaultTurn === "function" ? defaultTurn(request) : defaultTurn;
}

/**
 * The fake's summary: deterministic, naming how much it stands for and the transcript's last user
 * line, so tests can find it in later requests.
 */
export function summaryTurn(request: FakeRequestView): TextTurn {
  const lines = request.lastUserText.split("\n");
  const lastUser = lines.findLast((line) => line.startsWith("user: ")) ?? "user: (none)";
  return {
    text: `Fake summary of ${lines.length} transcript lines. Last user line: ${lastUser.slice("user: ".length, 200)}`,
  };
}
