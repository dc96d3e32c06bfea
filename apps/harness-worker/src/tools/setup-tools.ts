import type { AgentSpec } from "@wakeloop/contracts";
import { type NavigatedSession, sessionHistoryChars } from "@wakeloop/db";
import {
  type AgentCompareSetupInput,
  compareSetups,
  describeContextBudget,
  offeredTools,
  providerTools,
  toolProviderOf,
} from "@wakeloop/tool-runtime";
import { estimateTokens } from "../context/assemble-context";
import { contextFootprint, effectiveTools, historyBudget, promptTokens } from "../context/build-request";
import {
  clip,
  currentFingerprint,
  PREVIEW_CHARS,
  setupOf,
  targetEffectiveTools,
  withTarget,
} from "./navigation-target";
import type { ToolContext } from "./tool-context";
import { jsonOutcome, type ToolOutcome } from "./tool-outcome";

// The setup and context views of navigation: what a session runs with, how two setups differ, and how
// full a session's context is.

export async function describeContext(ctx: ToolContext, target: NavigatedSession): Promise<ToolOutcome> {
  const { view, settings } = ctx;
  const { session } = target;
  let footprint: ReturnType<typeof contextFootprint>;
  let available: string[];
  let model: AgentSpec["model"];
  if (session.id === view.sessionId) {
    // This wake's own request, counted as it is assembled.
    footprint = contextFootprint(view, settings);
    available = effectiveTools(view, settings).tools.map((tool) => tool.name);
    model = view.agent.model;
  } else {
    // Another session has no wake here: its figures are estimated from its pinned setup and stored history.
    const { agent } = setupOf(target);
    const effective = targetEffectiveTools(ctx, target);
    const systemTokens = promptTokens(agent.system);
    // The schemas its request carries: the offered tools, not the deferred ones (docs/tool-search.md).
    const toolSchemaTokens = estimateTokens(
      providerTools(offeredTools(effective), toolProviderOf(agent.model)),
    );
    const historyTokens = Math.ceil(
      (await sessionHistoryChars(ctx.db, { tenantId: session.tenant_id, sessionId: session.id })) / 4,
    );
    const room = historyBudget(agent.model, systemTokens + toolSchemaTokens);
    footprint = {
      systemTokens,
      toolSchemaTokens,
      historyTokens,
      selectedHistoryTokens: Math.min(historyTokens, room),
    };
    available = effective.tools.map((tool) => tool.name);
    model = agent.model;
  }
  return jsonOutcome({
    session_id: session.id,
    estimated: session.id !== view.sessionId,
    ...describeContextBudget({
      contextWindowTokens: model.context_window_tokens,
      maxOutputTokens: model.max_output_tokens,
      ...footprint,
      availableTools: available,
    }),
  });
}

export function describeSetup(ctx: ToolContext, target: NavigatedSession) {
  const { session } = target;
  const { agent, environment, fingerprint } = setupOf(target);
  const effective = targetEffectiveTools(ctx, target);
  return {
    session_id: session.id,
    agent_id: session.agent_id,
    agent_version: session.agent_version,
    agent_setup_fingerprint: fingerprint.fingerprint,
    section_fingerprints: fingerprint.sections,
    setup_matches_current: fingerprint.fingerprint === currentFingerprint(ctx).fingerprint,
    model: agent.model,
    prompt: { chars: agent.system.length, preview: clip(agent.system, PREVIEW_CHARS) },
    tools: {
      configured: agent.tools.map((tool) =>
        tool.type === "custom"
          ? { type: "custom", name: tool.name }
          : { type: "builtin", configs: tool.configs.length },
      ),
      effective: effective.tools.map((tool) => tool.name),
      excluded: effective.excluded.length,
    },
    policy: { tool_policy: agent.tool_policy, loop_detection: agent.loop_detection, budget: agent.budget },
    environment:
      environment === null
        ? null
        : {
            id: session.environment_id,
            name: environment.name,
            config: environment.config,
            tool_policy: environment.tool_policy,
          },
  };
}

/** Whether two sessions of this agent ran with the same setup, and which sections differ. */
export function compareSetup(ctx: ToolContext, args: AgentCompareSetupInput): Promise<ToolOutcome> {
  return withTarget(ctx, args.session_id, (first) =>
    withTarget(ctx, args.other_session_id, (second) => {
      const a = setupOf(first);
      const b = setupOf(second);
      const { matches, changedSections } = compareSetups(a.fingerprint, b.fingerprint);
      return jsonOutcome({
        session_id: first.session.id,
        other_session_id: second.session.id,
        matches,
        changed_sections: changedSections,
        fingerprints: { [first.session.id]: a.fingerprint, [second.session.id]: b.fingerprint },
        agent_versions: {
          [first.session.id]: first.session.agent_version,
          [second.session.id]: second.session.agent_version,
        },
      });
    }),
  );
}
