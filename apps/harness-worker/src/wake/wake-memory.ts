import type { SessionEvent } from "@wakeloop/contracts";
import type { NewEvent } from "@wakeloop/db";
import type { MemoryClient } from "@wakeloop/memory-client";
import type { Logger, Tracer } from "@wakeloop/telemetry";
import { fitRecall, recallText } from "../context/recall-budget";
import type { SessionView, WakeMemory } from "../session/session-view";

const UNAVAILABLE: WakeMemory = { ready: false, recallable: false, skills: [] };

export interface RecallSettings {
  /** Tokens of recalled memory the system context may hold (0: no recall). */
  maxTokens: number;
  /** Hits asked of the service. */
  maxHits: number;
  /** How long the wake waits for each answer at its start (skills index, recall); past it, it goes on without. */
  timeoutMs: number;
}

/**
 * Asks the memory service, once per wake, whether it answers (the `memory.ready` runtime fact), for
 * the agent's skills index and whether recall could find anything. The readiness ping (mostly answered
 * from the client's cache) and the context request go out together, so the context costs one round
 * trip, run beside the history read. A service that does not answer costs the wake its memory tools,
 * not the wake.
 */
export function loadWakeMemory(
  memory: MemoryClient | null,
  tracer: Tracer,
  log: Logger,
  scope: { tenantId: string; agentId: string },
  timeoutMs: number,
): Promise<WakeMemory> {
  if (memory === null) return Promise.resolve(UNAVAILABLE);
  return tracer.startActiveSpan("memory context", async (span) => {
    const context = memory.context(scope.tenantId, scope.agentId, timeoutMs);
    try {
      if (!(await memory.ready())) {
        span.setAttribute("wakeloop.memory.ready", false);
        // Not waited for: with no replica answering it fails or times out on its own.
        context.catch(() => undefined);
        return UNAVAILABLE;
      }
      const { skills, recallable = true } = await context;
      span.setAttributes({
        "wakeloop.memory.ready": true,
        "wakeloop.memory.skills": skills.length,
        "wakeloop.memory.recallable": recallable,
      });
      return { ready: true, recallable, skills };
    } catch (error) {
      log.warn({ err: error }, "memory service did not give the wake's context; memory tools are off");
      return UNAVAILABLE;
    } finally {
      span.end();
    }
  });
}

/**
 * Recalls the agent's memory entries best matching the wake's new input (the user messages no model
 * request has seen yet) into the system context within the token budget; the span `memory recall` and
 * the returned `session.memory_recalled` event say what was recalled. Nothing is asked when the service
 * is not ready, the agent has nothing to recall, or there is no new text, and a slow or failing service
 * costs the recall, not the wake.
 */
export function recallForWake(
  memory: MemoryClient | null,
  tracer: Tracer,
  log: Logger,
  view: SessionView,
  settings: RecallSettings,
): Promise<NewEvent | null> {
  if (memory === null || !view.memory.recallable || settings.maxTokens === 0) return Promise.resolve(null);
  const newInput = unprocessedMessages(view);
  const text = newInput
    .flatMap((event) => event.content)
    .flatMap((block) => (block.type === "text" ? [block.text] : []))
    .join("\n")
    .slice(0, 32_000)
    .trim();
  if (text === "") return Promise.resolve(null);
  return tracer.startActiveSpan("memory recall", async (span) => {
    try {
      const { hits } = await memory.recall(
        { tenant_id: view.tenantId, agent_id: view.agentId, text, limit: settings.maxHits },
        settings.timeoutMs,
      );
      const { sections, dropped } = fitRecall(hits, settings.maxTokens);
      span.setAttributes({
        "wakeloop.memory.recall.found": hits.length,
        "wakeloop.memory.recall.dropped": dropped,
        "wakeloop.memory.recall.tokens": sections.reduce((sum, section) => sum + section.tokens, 0),
        "wakeloop.memory.recall.entries": sections.map((section) => `${section.store}/${section.target}`),
      });
      if (sections.length === 0) return null;
      const event: NewEvent = {
        type: "session.memory_recalled",
        text: recallText(sections),
        message_ids: newInput.map((event) => event.id),
        budget_tokens: settings.maxTokens,
        hits: sections.map(({ store, target, version_id, tokens, truncated }) => ({
          store,
          target,
          version_id,
          tokens,
          truncated,
        })),
        dropped,
      };
      return event;
    } catch (error) {
      span.recordException(error as Error);
      log.warn({ err: error }, "memory recall failed or timed out; the wake goes on without it");
      return null;
    } finally {
      span.end();
    }
  });
}

type UserMessage = Extract<SessionEvent, { type: "user.message" }>;

/**
 * The user messages no model request has seen yet, in seq order. They are the history's last ones, so
 * it is read from the end until all are found: a wake's start does not walk a long session's history.
 */
function unprocessedMessages(view: SessionView): UserMessage[] {
  const unprocessed = new Set(view.state.unprocessed_message_ids);
  const found: UserMessage[] = [];
  const { events } = view;
  for (let index = events.length - 1; index >= 0 && found.length < unprocessed.size; index--) {
    const event = events[index];
    if (event?.type === "user.message" && unprocessed.has(event.id)) found.push(event);
  }
  return found.reverse();
}
