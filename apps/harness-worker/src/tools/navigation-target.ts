import { AgentSpec, EnvironmentSpec } from "@wakeloop/contracts";
import { findAgentSession, type NavigatedSession, readJson } from "@wakeloop/db";
import { type SetupFingerprint, sessionEffectiveTools, setupFingerprint } from "@wakeloop/tool-runtime";
import type { ToolContext } from "./tool-context";
import { errorOutcome, type ToolOutcome } from "./tool-outcome";

// What every navigation tool shares: finding a session of this agent (and only of this agent), its
// setup and the summary the list tools give of it.

/** How much of a long text (an event, a prompt) a navigation answer shows. */
export const PREVIEW_CHARS = 1_000;

/** Runs `work` on a session of this agent (the current one when `sessionId` is omitted). */
export async function withTarget(
  ctx: ToolContext,
  sessionId: string | undefined,
  work: (target: NavigatedSession) => ToolOutcome | Promise<ToolOutcome>,
): Promise<ToolOutcome> {
  const { view } = ctx;
  const id = sessionId ?? view.sessionId;
  const target = await findAgentSession(ctx.db, { tenantId: view.tenantId, agentId: view.agentId }, id);
  if (target === null) return errorOutcome(`session ${id} is not a session of this agent`);
  return work(target);
}

interface TargetSetup {
  agent: AgentSpec;
  environment: EnvironmentSpec | null;
  fingerprint: SetupFingerprint;
}

const setups = new WeakMap<NavigatedSession, TargetSetup>();

export function setupOf(target: NavigatedSession): TargetSetup {
  let setup = setups.get(target);
  if (setup === undefined) {
    const { session } = target;
    const agent = readJson(
      AgentSpec,
      target.agentSpec,
      `agent ${session.agent_id} v${session.agent_version}`,
    );
    const environment =
      target.environmentSpec === null
        ? null
        : readJson(EnvironmentSpec, target.environmentSpec, `environment ${session.environment_id}`);
    setup = { agent, environment, fingerprint: setupFingerprint({ agent, environment }) };
    setups.set(target, setup);
  }
  return setup;
}

export function currentFingerprint(ctx: ToolContext): SetupFingerprint {
  return setupFingerprint({ agent: ctx.view.agent, environment: ctx.view.environment?.spec ?? null });
}

/** The tools a session of this agent would be offered, computed as its own wakes compute them. */
export function targetEffectiveTools(ctx: ToolContext, target: NavigatedSession) {
  const { agent, environment } = setupOf(target);
  return sessionEffectiveTools(
    {
      agent,
      environmentPolicy: environment?.tool_policy ?? null,
      environmentMcpServers: environment?.mcp_servers ?? [],
      mcpListings: target.session.state.mcp_servers,
      depth: target.session.depth,
      childCount: target.session.state.child_session_ids.length,
      sandboxStatus: target.session.state.sandbox_status,
      sandboxImage: environment?.config.image ?? null,
      memoryReady: ctx.view.memory.ready,
      // Navigation stays within this agent, so its tools are the ones this wake read.
      agentTools: ctx.view.agentTools,
      revealedTools: target.session.state.revealed_tools,
    },
    ctx.settings,
  );
}

function relationToCurrent(ctx: ToolContext, target: NavigatedSession): string {
  const { view } = ctx;
  const { session } = target;
  if (session.id === view.sessionId) return "self";
  if (session.id === view.parentSessionId) return "parent";
  if (session.parent_session_id === view.sessionId) return "child";
  if (view.parentSessionId !== null && session.parent_session_id === view.parentSessionId) return "sibling";
  return "same_agent";
}

export function summary(ctx: ToolContext, target: NavigatedSession, current: SetupFingerprint) {
  const { session, childCount, hasOutcome } = target;
  const { state } = session;
  const pending = state.pending_actions[0];
  const { fingerprint } = setupOf(target).fingerprint;
  return {
    id: session.id,
    title: state.title,
    status: session.status,
    stop_reason: state.stop_reason?.type ?? null,
    termination_reason: state.termination_reason,
    parent_session_id: session.parent_session_id,
    relation_to_current: relationToCurrent(ctx, target),
    child_count: childCount,
    has_outcome: hasOutcome,
    requires_action:
      pending === undefined
        ? null
        : {
            pending_action_kind: pending.kind,
            pending_action_tool_name: pending.name,
            pending_count: state.pending_actions.length,
          },
    agent_version: session.agent_version,
    agent_setup_fingerprint: fingerprint,
    setup_matches_current: fingerprint === current.fingerprint,
    usage: { input_tokens: state.usage.input_tokens, output_tokens: state.usage.output_tokens },
    last_seq: state.last_seq,
    created_at: session.created_at.toISOString(),
    updated_at: session.updated_at.toISOString(),
  };
}

export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more characters]`;
}
