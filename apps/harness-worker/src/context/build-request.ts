import type { ModelRequest } from "@wakeloop/model-providers";
import {
  type EffectiveToolSet,
  providerTools,
  sessionEffectiveTools,
  toolProviderOf,
} from "@wakeloop/tool-runtime";
import type { SessionView } from "../wake/session-view";
import type { WakeSettings } from "../wake/wake-settings";
import { eventsToMessages, fitToBudget } from "./assemble-context";

export function effectiveTools(view: SessionView, settings: WakeSettings): EffectiveToolSet {
  return sessionEffectiveTools(
    {
      agent: view.agent,
      environmentPolicy: view.environment?.spec.tool_policy ?? null,
      parentSessionId: view.parentSessionId,
      sandboxStatus: view.state.sandbox_status,
    },
    settings,
  );
}

/**
 * The next model request: effective tools with schemas normalized for the provider, and as much history
 * as fits the model's context window after the system prompt, tools and the answer's room.
 */
export function buildModelRequest(
  view: SessionView,
  settings: WakeSettings,
): { request: ModelRequest; effective: EffectiveToolSet } {
  const effective = effectiveTools(view, settings);
  const provider = toolProviderOf(view.agent.model);
  const tools = providerTools(effective.tools, provider);
  const model = view.agent.model;
  const fixed = Math.ceil((view.agent.system.length + JSON.stringify(tools).length) / 4);
  const budget = Math.max(1_000, model.context_window_tokens - model.max_output_tokens - fixed);
  return {
    effective,
    request: {
      model: model.id,
      system: view.agent.system,
      messages: fitToBudget(eventsToMessages(view.events), budget),
      tools,
      maxOutputTokens: model.max_output_tokens,
    },
  };
}
