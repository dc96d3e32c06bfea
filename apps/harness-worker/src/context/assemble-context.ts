import {
  type Content,
  type EventOf,
  type PayloadOf,
  type SessionEvent,
  textContent,
} from "@wakeloop/contracts";
import type { ModelAssistantPart, ModelMessage, ModelToolResult } from "@wakeloop/model-providers";
import { outcomeMessage } from "@wakeloop/session-core";

export const MISSING_RESULT = "No result was recorded for this call.";

/**
 * Provider-neutral history, built one event at a time. Tool results are placed right after the
 * assistant turn that made the calls (providers require it), so a user message that arrived while
 * tools ran is moved after those results; a call that never got a result gets an error result. A wake
 * keeps one per session view, so a step converts only the events committed since its last request and
 * its cost does not grow with the history.
 */
export class History {
  /** Events added so far. */
  seen = 0;
  /**
   * The conversation's events after the last summary (a `session.compaction` with one), which a later
   * compaction rebuilds the messages from; the summary and the cleared results stand for the rest.
   */
  private retained: ConversationEvent[] = [];
  private summary: { text: string; toSeq: number } | null = null;
  private readonly cleared = new Map<string, ClearedResult>();
  /** A compaction came after the messages were built: they are rebuilt before they are read. */
  private stale = false;
  private closed: ModelMessage[] = [];
  private closedTokens: number[] = [];
  private assistant: ModelAssistantPart[] | null = null;
  private results = new Map<string, ModelToolResult>();
  private openCalls: string[] = [];
  private deferredUser: Content[] = [];
  /**
   * The open turn as messages with their estimates, kept until an event changes it: a request sees the
   * same message objects as the one before (a provider converts each object once) and closing the turn
   * keeps them, so each message is built and estimated once.
   */
  private open: { messages: ModelMessage[]; tokens: number[] } | null = null;

  add(event: SessionEvent): void {
    this.seen += 1;
    if (event.type === "session.compaction") {
      this.compact(event);
      return;
    }
    if (isConversation(event)) this.retained.push(event);
    if (!this.stale) this.convert(event);
  }

  /** What compaction has to go on: the events after the last summary, and the results already cleared. */
  get compactable(): {
    events: readonly ConversationEvent[];
    cleared: ReadonlySet<string>;
    fromSeq: number;
    summary: string | null;
  } {
    return {
      events: this.retained,
      summary: this.summary?.text ?? null,
      cleared: new Set(this.cleared.keys()),
      fromSeq: (this.summary?.toSeq ?? 0) + 1,
    };
  }

  /** A copy of this history with `compaction` applied, to measure what it would leave. */
  withCompaction(compaction: CompactionPayload): History {
    const copy = new History();
    copy.seen = this.seen;
    copy.retained = [...this.retained];
    copy.summary = this.summary;
    for (const [id, result] of this.cleared) copy.cleared.set(id, result);
    copy.compact(compaction);
    return copy;
  }

  /**
   * Applies a compaction: the results it cleared become stubs and, with a summary, the events it
   * replaces give way to it. The messages are rebuilt from what remains when next asked for, so a
   * history read whole (a wake's start) rebuilds once, not at each of its compactions.
   */
  private compact(compaction: CompactionPayload): void {
    for (const result of compaction.cleared_tool_results) this.cleared.set(result.tool_use_id, result);
    if (compaction.summary !== null) {
      const toSeq = compaction.replaces.to_seq;
      this.summary = { text: compaction.summary, toSeq };
      this.retained = this.retained.filter((event) => event.seq > toSeq);
    }
    this.stale = true;
  }

  private rebuild(): void {
    this.stale = false;
    this.closed = [];
    this.closedTokens = [];
    this.assistant = null;
    this.results = new Map();
    this.openCalls = [];
    this.deferredUser = [];
    this.open = null;
    if (this.summary !== null) this.keep({ role: "user", content: summaryContent(this.summary) });
    for (const event of this.retained) this.convert(event);
  }

  private convert(event: SessionEvent): void {
    switch (event.type) {
      case "user.message":
        this.addUser(event.content);
        break;
      case "user.define_outcome":
        this.addUser(textContent(outcomeMessage(event)));
        break;
      case "session.memory_recalled":
        // Right after the messages it was recalled for (older events kept no text).
        if (event.text === undefined) return;
        this.addUser(textContent(event.text));
        break;
      case "agent.message":
        if (this.assistant !== null && (this.openCalls.length > 0 || this.results.size > 0)) this.closeTurn();
        this.assistant ??= [];
        this.assistant.push(...event.content.filter((block) => block.type === "text"));
        break;
      case "agent.tool_use":
      case "agent.mcp_tool_use":
      case "agent.custom_tool_use":
        if (this.assistant === null || (this.openCalls.length > 0 && this.allAnswered())) {
          this.closeTurn();
          this.assistant = [];
        }
        this.assistant.push({ type: "tool_call", id: event.id, name: event.name, input: event.input });
        this.openCalls.push(event.id);
        break;
      case "agent.tool_result":
        this.addResult(event.tool_use_id, event.content, event.is_error);
        break;
      case "agent.mcp_tool_result":
        this.addResult(event.mcp_tool_use_id, event.content, event.is_error);
        break;
      case "user.custom_tool_result":
        this.addResult(event.custom_tool_use_id, event.content, event.is_error ?? false);
        break;
      default:
        // Not part of the conversation: the open turn stays as it was.
        return;
    }
    this.open = null;
  }

  /** The history as a provider sees it now (the open turn closed), with each message's token estimate. */
  messages(): { messages: ModelMessage[]; tokens: number[] } {
    if (this.stale) this.rebuild();
    const open = this.openTurn();
    return {
      messages: [...this.closed, ...open.messages],
      tokens: [...this.closedTokens, ...open.tokens],
    };
  }

  private openTurn(): { messages: ModelMessage[]; tokens: number[] } {
    if (this.open === null) {
      const messages = this.openMessages();
      this.open = { messages, tokens: messages.map(estimateTokens) };
    }
    return this.open;
  }

  private openMessages(): ModelMessage[] {
    if (this.assistant === null) return [];
    const turn: ModelMessage[] = [{ role: "assistant", content: [...this.assistant] }];
    if (this.openCalls.length > 0) {
      turn.push({
        role: "tool",
        results: this.openCalls.map(
          (id) =>
            this.results.get(id) ?? {
              toolCallId: id,
              content: [{ type: "text", text: MISSING_RESULT }],
              isError: true,
            },
        ),
      });
    }
    for (const content of this.deferredUser) turn.push({ role: "user", content });
    return turn;
  }

  private closeTurn(): void {
    const { messages, tokens } = this.openTurn();
    this.closed.push(...messages);
    this.closedTokens.push(...tokens);
    this.open = null;
    this.assistant = null;
    this.results = new Map();
    this.openCalls = [];
    this.deferredUser = [];
  }

  private keep(message: ModelMessage): void {
    this.closed.push(message);
    this.closedTokens.push(estimateTokens(message));
  }

  /** A user turn; one that arrived while tools ran goes after their results. */
  private addUser(content: Content): void {
    if (this.assistant !== null && !this.allAnswered()) this.deferredUser.push(content);
    else {
      this.closeTurn();
      this.keep({ role: "user", content });
    }
  }

  private allAnswered(): boolean {
    return this.openCalls.every((id) => this.results.has(id));
  }

  private addResult(id: string, content: Content, isError: boolean): void {
    if (!this.openCalls.includes(id)) return;
    const cleared = this.cleared.get(id);
    this.results.set(id, {
      toolCallId: id,
      content: cleared === undefined ? content : textContent(clearedStub(cleared)),
      isError,
    });
  }
}

export type CompactionPayload = PayloadOf<"session.compaction">;
export type ClearedResult = CompactionPayload["cleared_tool_results"][number];

/** The events a request's conversation is made of; the rest (status, usage, spans…) are not sent. */
export type ConversationEvent = EventOf<
  | "user.message"
  | "user.define_outcome"
  | "agent.message"
  | "agent.tool_use"
  | "agent.mcp_tool_use"
  | "agent.custom_tool_use"
  | "agent.tool_result"
  | "agent.mcp_tool_result"
  | "user.custom_tool_result"
>;

export function isConversation(event: SessionEvent): event is ConversationEvent {
  switch (event.type) {
    case "user.message":
    case "user.define_outcome":
    case "agent.message":
    case "agent.tool_use":
    case "agent.mcp_tool_use":
    case "agent.custom_tool_use":
    case "agent.tool_result":
    case "agent.mcp_tool_result":
    case "user.custom_tool_result":
      return true;
    default:
      return false;
  }
}

/** What a cleared tool result says in its place: enough for the model to call again if it needs it. */
export function clearedStub(result: ClearedResult): string {
  return `[Result of ${result.name} cleared to save context: it was ${result.chars} characters. Call the tool again if you need it.]`;
}

/**
 * The summary as the request's first message, a user turn: it stands for what the user and the agent
 * said before, and a provider wants a conversation to open with the user. It changes only at the next
 * summary, so what follows it stays a stable prefix between compactions.
 */
function summaryContent(summary: { text: string; toSeq: number }): Content {
  return textContent(
    `[Summary of the conversation before this point (events 1–${summary.toSeq}), written when it grew past the context threshold]\n\n${summary.text}`,
  );
}

/** The whole history of `events` at once. */
export function eventsToMessages(events: readonly SessionEvent[]): ModelMessage[] {
  const history = new History();
  for (const event of events) history.add(event);
  return history.messages().messages;
}

/**
 * What one image costs a model: providers bill by pixels (Anthropic about width × height / 750), not
 * by the length of its base64, so a 1280×720 screenshot is about 1 230 tokens, never its 100 000+
 * characters / 4. A little more than that, for any image.
 */
export const IMAGE_TOKENS = 1_600;

/**
 * A rough, provider-independent token estimate: about four characters a token, and IMAGE_TOKENS for
 * each image content block.
 */
export function estimateTokens(value: unknown): number {
  // Without an image block the plain encoding is the same text; a replacer function makes
  // JSON.stringify several times slower, so it runs only when there is an image to leave out.
  const plain = JSON.stringify(value);
  if (!plain?.includes('"type":"image"')) return Math.ceil((plain?.length ?? 0) / 4);
  let images = 0;
  const text = JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item === "object" && item !== null && (item as { type?: unknown }).type === "image") {
      images += 1;
      return undefined;
    }
    return item;
  });
  return Math.ceil((text?.length ?? 0) / 4) + images * IMAGE_TOKENS;
}

/**
 * Keeps the newest history that fits `budgetTokens`, cutting only at a user message so no tool result
 * loses the call it answers. The newest user turn is always kept.
 */
export function fitToBudget(
  messages: readonly ModelMessage[],
  budgetTokens: number,
  /** Each message's estimate, when the caller has them. */
  tokens: readonly number[] = messages.map(estimateTokens),
): ModelMessage[] {
  let total = tokens.reduce((sum, count) => sum + count, 0);
  let start = 0;
  while (total > budgetTokens) {
    const next = messages.findIndex((message, index) => index > start && message.role === "user");
    if (next === -1) break;
    for (let index = start; index < next; index++) total -= tokens[index] ?? 0;
    start = next;
  }
  return messages.slice(start);
}
