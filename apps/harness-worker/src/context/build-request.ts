import type { ModelConfig } from "@wakeloop/contracts";
import type { ModelRequest, ModelToolSpec } from "@wakeloop/model-providers";
import {
  offeredTools,
  providerTools,
  type SessionToolInputs,
  type SessionToolSet,
  sessionEffectiveTools,
  toolProviderOf,
} from "@wakeloop/tool-runtime";
import { LRUCache } from "lru-cache";
import type { SessionView } from "../session/session-view";
import type { WakeSettings } from "../wake-settings";
import { type CompactionPayload, estimateTokens, fitToBudget, History } from "./assemble-context";
import { type CompactionPlan, compactionEvent, planCompaction } from "./compaction-plan";
import { SUMMARY_MAX_TOKENS } from "./summary-request";

// A wake computes its tools before each model request and again at execution; within one wake only the
// sandbox status, the children spawned, the tools revealed (and the MCP listing its start commits) can
// change them, so each view keeps one set per status, children, reveals and listing (and its provider
// schemas of the offered tools).
interface ToolSet {
  effective: SessionToolSet;
  wire: ModelToolSpec[];
  wireTokens: number;
}
const toolSets = new WeakMap<SessionView, { listing: unknown; byStatus: Map<string, ToolSet> }>();

// Wakes of one agent version in one situation (environment, listing, sandbox status, depth, children,
// memory, agent tools) get the same set, so sets are shared across wakes by those inputs: a wake's
// first request then skips the policy pipeline and the schema conversion, and the provider encodings
// cached per tool object (model-providers) carry over too. Keyed by the inputs' JSON, so any change
// of them (a new agent version, a changed policy) is a new entry; one cache per settings object.
const SHARED_TOOL_SETS = 512;
const sharedToolSets = new WeakMap<WakeSettings, LRUCache<string, ToolSet>>();

function sharedToolSet(inputs: SessionToolInputs, settings: WakeSettings): ToolSet {
  let shared = sharedToolSets.get(settings);
  if (shared === undefined) {
    shared = new LRUCache({ max: SHARED_TOOL_SETS });
    sharedToolSets.set(settings, shared);
  }
  const key = JSON.stringify(inputs);
  let entry = shared.get(key);
  if (entry === undefined) {
    const effective = sessionEffectiveTools(inputs, settings);
    const wire = providerTools(offeredTools(effective), toolProviderOf(inputs.agent.model));
    entry = { effective, wire, wireTokens: estimateTokens(wire) };
    shared.set(key, entry);
  }
  return entry;
}

function toolSet(view: SessionView, settings: WakeSettings): ToolSet {
  let cached = toolSets.get(view);
  if (cached === undefined || cached.listing !== view.state.mcp_servers) {
    cached = { listing: view.state.mcp_servers, byStatus: new Map() };
    toolSets.set(view, cached);
  }
  const { byStatus } = cached;
  // Spawning within the wake can reach the children limit, which changes the set as the sandbox does.
  // Reveals only append, so their count tells the lists apart.
  const key = `${view.state.sandbox_status ?? "none"}:${view.state.child_session_ids.length}:${view.state.revealed_tools.length}`;
  let entry = byStatus.get(key);
  if (entry === undefined) {
    entry = sharedToolSet(
      {
        agent: view.agent,
        environmentPolicy: view.environment?.spec.tool_policy ?? null,
        environmentMcpServers: view.environment?.spec.mcp_servers ?? [],
        mcpListings: view.state.mcp_servers,
        depth: view.depth,
        childCount: view.state.child_session_ids.length,
        sandboxStatus: view.state.sandbox_status,
        sandboxImage: view.environment?.spec.config.image ?? null,
        memoryReady: view.memory.ready,
        agentTools: view.agentTools,
        revealedTools: view.state.revealed_tools,
      },
      settings,
    );
    byStatus.set(key, entry);
  }
  return entry;
}

const LEARNING_NOTE =
  "## Learnings\nTo record a durable learning (a fix that worked, a pitfall, a preference later sessions " +
  "should know), state it in your reply inside <learning>...</learning>; the runtime keeps each once.";

/**
 * The agent's system prompt (and, while memory answers, how to state a learning), followed by the index of its enabled skills (names and one-line
 * descriptions; bodies are read on demand with skills_read) when it has any. Memory recalled for a
 * wake's new input is in the history (`session.memory_recalled`), not here: what is here stays the
 * same from wake to wake, a prefix the provider caches.
 */
export function systemPrompt(view: SessionView): string {
  const { skills, ready } = view.memory;
  let prompt = view.agent.system;
  // The runtime captures these whatever tools are offered (learning_list may be deferred), so the
  // model is told here, once, in the part of the prompt that stays the same.
  if (ready) prompt += `\n\n${LEARNING_NOTE}`;
  if (skills.length > 0) {
    const index = skills.map((skill) => `- ${skill.name}: ${skill.description}`).join("\n");
    prompt += `\n\n## Skills\nRead a skill with skills_read before following it.\n${index}`;
  }
  return prompt;
}

const histories = new WeakMap<SessionView, History>();

/** The conversation built so far from the view's history (none before its first request). */
export function conversationOf(view: SessionView): History | null {
  return histories.get(view) ?? null;
}

/**
 * Goes on from a conversation an earlier wake of the session built, when the view's history starts
 * with the events it saw (the earlier wake's, as the `HistoryCache` keeps them).
 */
export function continueConversation(view: SessionView, conversation: History): void {
  if (conversation.seen <= view.events.length) histories.set(view, conversation);
}

/** The view's history, converted up to its last event (only the events committed since the last request). */
function conversation(view: SessionView): History {
  let history = histories.get(view);
  if (history === undefined) {
    history = new History();
    histories.set(view, history);
  }
  const { events } = view;
  for (let index = history.seen; index < events.length; index++) {
    const event = events[index];
    if (event !== undefined) history.add(event);
  }
  return history;
}

function historyOf(view: SessionView): ReturnType<History["messages"]> {
  return conversation(view).messages();
}

/** What compaction the next request needs first (docs/context-management.md), with its estimate. */
export interface PendingCompaction {
  plan: CompactionPlan;
  /** The summary to fold into a new one, if an earlier compaction wrote one. */
  previousSummary: string | null;
  tokensBefore: number;
  /** The next request's estimate with `compaction` applied. */
  tokensAfter(compaction: CompactionPayload): number;
}

/**
 * The compaction the next request needs, when the agent manages its context (`context_management`)
 * and the request would pass its threshold; null otherwise. Cheap under the threshold: the estimate
 * is the sum the history keeps per message.
 */
export function pendingCompaction(view: SessionView, settings: WakeSettings): PendingCompaction | null {
  const management = view.agent.context_management;
  if (management === undefined) return null;
  const fixed = promptTokens(systemPrompt(view)) + toolSet(view, settings).wireTokens;
  const history = conversation(view);
  const tokensBefore = fixed + sum(history.messages().tokens);
  if (tokensBefore <= management.threshold_tokens) return null;
  const { events, cleared, fromSeq, summary } = history.compactable;
  const plan = planCompaction(management, { events, cleared, fromSeq, requestTokens: tokensBefore });
  if (plan === null) return null;
  const tokensAfter = (compaction: CompactionPayload) =>
    fixed + sum(history.withCompaction(compaction).messages().tokens);
  // A summary as long as one may be that leaves the request no smaller (what it would replace is
  // short, the kept turn is what is large) would be asked for again at every request: not worth one.
  if (plan.strategy === "summary") {
    const longest = { text: "x".repeat(SUMMARY_MAX_TOKENS * 4), model: "" };
    if (tokensAfter(compactionEvent(plan, longest, { before: 0, after: 0 })) >= tokensBefore) return null;
  }
  return { plan, previousSummary: summary, tokensBefore, tokensAfter };
}

function sum(counts: readonly number[]): number {
  return counts.reduce((total, count) => total + count, 0);
}

/** The session's tools this step: every tool it may call, and which of them the request offers. */
export function effectiveTools(view: SessionView, settings: WakeSettings): SessionToolSet {
  return toolSet(view, settings).effective;
}

/** The system prompt's estimate: about four characters a token. */
export function promptTokens(system: string): number {
  return Math.ceil(system.length / 4);
}

/** History tokens the next request has room for, after the system prompt, tool schemas and the answer. */
export function historyBudget(model: ModelConfig, fixedTokens: number): number {
  return Math.max(1_000, model.context_window_tokens - model.max_output_tokens - fixedTokens);
}

/** Token estimates of the parts of the next request, as `buildModelRequest` counts them. */
export function contextFootprint(
  view: SessionView,
  settings: WakeSettings,
): { systemTokens: number; toolSchemaTokens: number; historyTokens: number; selectedHistoryTokens: number } {
  const { wireTokens } = toolSet(view, settings);
  const systemTokens = promptTokens(systemPrompt(view));
  const { messages, tokens } = historyOf(view);
  const selected = fitToBudget(messages, historyBudget(view.agent.model, systemTokens + wireTokens), tokens);
  const historyTokens = tokens.reduce((sum, count) => sum + count, 0);
  const dropped = tokens.slice(0, messages.length - selected.length).reduce((sum, count) => sum + count, 0);
  return {
    systemTokens,
    toolSchemaTokens: wireTokens,
    historyTokens,
    selectedHistoryTokens: historyTokens - dropped,
  };
}

/**
 * The next model request: the offered tools with schemas normalized for the provider, and as much history
 * as fits the model's context window after the system prompt, tools and the answer's room.
 */
export function buildModelRequest(
  view: SessionView,
  settings: WakeSettings,
): { request: ModelRequest; effective: SessionToolSet } {
  const { effective, wire: tools, wireTokens } = toolSet(view, settings);
  const model = view.agent.model;
  const system = systemPrompt(view);
  const budget = historyBudget(model, promptTokens(system) + wireTokens);
  const { messages, tokens } = historyOf(view);
  return {
    effective,
    request: {
      model: model.id,
      system,
      messages: fitToBudget(messages, budget, tokens),
      tools,
      maxOutputTokens: model.max_output_tokens,
      // One key per session: its requests share their prefix from step to step and wake to wake.
      ...(settings.promptCache !== null && { cache: { key: view.sessionId, ttl: settings.promptCache } }),
    },
  };
}
