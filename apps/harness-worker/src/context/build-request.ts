import type { ModelRequest, ModelToolSpec } from "@wakeloop/model-providers";
import {
  type EffectiveToolSet,
  providerTools,
  sessionEffectiveTools,
  toolProviderOf,
} from "@wakeloop/tool-runtime";
import type { SessionView } from "../session/session-view";
import type { WakeSettings } from "../wake-settings";
import { estimateTokens, fitToBudget, History } from "./assemble-context";

// A wake computes its tools before each model request and again at execution; within one wake only the
// sandbox status can change them, so each view keeps one set per status (and its provider schemas).
interface ToolSet {
  effective: EffectiveToolSet;
  wire: ModelToolSpec[];
  wireTokens: number;
}
const toolSets = new WeakMap<SessionView, Map<string, ToolSet>>();

function toolSet(view: SessionView, settings: WakeSettings): ToolSet {
  let byStatus = toolSets.get(view);
  if (byStatus === undefined) {
    byStatus = new Map();
    toolSets.set(view, byStatus);
  }
  const key = view.state.sandbox_status ?? "none";
  let entry = byStatus.get(key);
  if (entry === undefined) {
    const effective = sessionEffectiveTools(
      {
        agent: view.agent,
        environmentPolicy: view.environment?.spec.tool_policy ?? null,
        parentSessionId: view.parentSessionId,
        sandboxStatus: view.state.sandbox_status,
      },
      settings,
    );
    const wire = providerTools(effective.tools, toolProviderOf(view.agent.model));
    entry = { effective, wire, wireTokens: estimateTokens(wire) };
    byStatus.set(key, entry);
  }
  return entry;
}

const histories = new WeakMap<SessionView, History>();

/** The view's history as messages, converting only the events committed since the last request. */
function historyOf(view: SessionView): ReturnType<History["messages"]> {
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
  return history.messages();
}

export function effectiveTools(view: SessionView, settings: WakeSettings): EffectiveToolSet {
  return toolSet(view, settings).effective;
}

/**
 * The next model request: effective tools with schemas normalized for the provider, and as much history
 * as fits the model's context window after the system prompt, tools and the answer's room.
 */
export function buildModelRequest(
  view: SessionView,
  settings: WakeSettings,
): { request: ModelRequest; effective: EffectiveToolSet } {
  const { effective, wire: tools, wireTokens } = toolSet(view, settings);
  const model = view.agent.model;
  const fixed = Math.ceil(view.agent.system.length / 4) + wireTokens;
  const budget = Math.max(1_000, model.context_window_tokens - model.max_output_tokens - fixed);
  const { messages, tokens } = historyOf(view);
  return {
    effective,
    request: {
      model: model.id,
      system: view.agent.system,
      messages: fitToBudget(messages, budget, tokens),
      tools,
      maxOutputTokens: model.max_output_tokens,
    },
  };
}
