import type { ModelRequest } from "@wakeloop/model-providers";
import {
  agentToolRegistry,
  computeEffectiveTools,
  type EffectiveToolSet,
  normalizeToolSchema,
  type PolicyContext,
  toolProviderOf,
} from "@wakeloop/tool-runtime";
import type { SessionView } from "../wake/session-view";
import type { WakeSettings } from "../wake/wake-settings";
import { eventsToMessages, fitToBudget } from "./assemble-context";

/** The policy inputs of one session; the same view always gives the same context (invariant 6). */
export function policyContext(view: SessionView, settings: WakeSettings): PolicyContext {
  return {
    registry: agentToolRegistry(view.agent),
    globalPolicy: settings.globalToolPolicy,
    agent: view.agent,
    environmentPolicy: view.environment?.spec.tool_policy ?? null,
    provider: toolProviderOf(view.agent.model),
    subSessionDepth: view.parentSessionId === null ? 0 : 1,
    maxSubSessionDepth: settings.maxSubSessionDepth,
    isOwner: true,
  };
}

export function effectiveTools(view: SessionView, settings: WakeSettings): EffectiveToolSet {
  return computeEffectiveTools(policyContext(view, settings), {
    sandboxStatus: view.state.sandbox_status,
    memoryReady: false,
  });
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
  const tools = effective.tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: normalizeToolSchema(tool.inputSchema, provider).schema,
  }));
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
