import type {
  AgentSpec,
  EnvironmentSpec,
  SessionEvent,
  SessionState,
  SkillSummary,
} from "@wakeloop/contracts";
import { reduceSessionState } from "@wakeloop/session-core";
import type { AgentDefinedToolSpec } from "@wakeloop/tool-runtime";

/** What the memory service told this wake at its start; without an answer its tools are not offered. */
export interface WakeMemory {
  ready: boolean;
  /** Whether recall could find anything: false when the agent has no memory entry to recall. */
  recallable: boolean;
  /** The skills index for the system context: enabled skills, names and one-line descriptions. */
  skills: SkillSummary[];
}

/**
 * What one wake knows of its session: the projection and the full event history, kept current from the
 * events this wake commits plus any that others (the gateway) committed in between.
 */
export type ToolUseEvent = Extract<SessionEvent, { type: "agent.tool_use" | "agent.mcp_tool_use" }>;

export class SessionView {
  readonly tenantId: string;
  readonly sessionId: string;
  readonly agentId: string;
  readonly agent: AgentSpec;
  readonly environment: { id: string; spec: EnvironmentSpec } | null;
  readonly parentSessionId: string | null;
  /** 0 for a root session, its parent's + 1 for a sub-session. */
  readonly depth: number;
  /** Set once at wake start (memory.ready runtime fact, skills index, recall), fixed for the wake. */
  memory: WakeMemory = { ready: false, recallable: false, skills: [] };
  /**
   * The agent's own tools, read once at wake start (`loadAgentTools`): a tool created, changed or
   * disabled during the wake is offered as such from the next wake on.
   */
  agentTools: readonly AgentDefinedToolSpec[] = [];
  private current: SessionState;
  private readonly history: SessionEvent[];

  constructor(init: {
    tenantId: string;
    sessionId: string;
    agentId: string;
    agent: AgentSpec;
    environment: { id: string; spec: EnvironmentSpec } | null;
    parentSessionId: string | null;
    depth: number;
    state: SessionState;
    events: SessionEvent[];
  }) {
    this.tenantId = init.tenantId;
    this.sessionId = init.sessionId;
    this.agentId = init.agentId;
    this.agent = init.agent;
    this.environment = init.environment;
    this.parentSessionId = init.parentSessionId;
    this.depth = init.depth;
    this.current = init.state;
    this.history = init.events;
  }

  get state(): SessionState {
    return this.current;
  }

  get events(): readonly SessionEvent[] {
    return this.history;
  }

  get lastSeq(): number {
    return this.current.last_seq;
  }

  /** Applies committed events in seq order; the caller fills any gap before calling. */
  apply(events: readonly SessionEvent[]): void {
    for (const event of events) {
      if (event.seq <= this.current.last_seq) continue;
      if (event.seq !== this.current.last_seq + 1) {
        throw new Error(`session view gap: have seq ${this.current.last_seq}, got ${event.seq}`);
      }
      this.history.push(event);
      this.current = reduceSessionState(this.current, event);
    }
  }

  /**
   * Applies events this wake committed right after the view's last one, with the projection their
   * append folded over them from the view's head (the same reducer over the same events), so they are
   * not reduced a second time.
   */
  applyFolded(events: readonly SessionEvent[], state: SessionState): void {
    if (events[0]?.seq !== this.current.last_seq + 1 || state.last_seq !== events.at(-1)?.seq) {
      this.apply(events);
      return;
    }
    this.history.push(...events);
    this.current = state;
  }

  /** The tool-use events (managed and MCP) that have no result yet, in the order the model made them. */
  unresolvedCalls(): ToolUseEvent[] {
    // One pass: a result always follows its call, and a Map keeps the calls in the order they came.
    const open = new Map<string, ToolUseEvent>();
    for (const event of this.history) {
      if (event.type === "agent.tool_use" || event.type === "agent.mcp_tool_use") open.set(event.id, event);
      else if (event.type === "agent.tool_result") open.delete(event.tool_use_id);
      else if (event.type === "agent.mcp_tool_result") open.delete(event.mcp_tool_use_id);
    }
    return [...open.values()];
  }

  /** Whether a call was announced as `agent.mcp_tool_use` (its result is then an `agent.mcp_tool_result`). */
  isMcpCall(id: string): boolean {
    for (let index = this.history.length - 1; index >= 0; index--) {
      const event = this.history[index];
      if (event?.id === id) return event.type === "agent.mcp_tool_use";
    }
    return false;
  }

  /** The confirmation that answered a tool use, if any. */
  confirmationFor(toolUseId: string): Extract<SessionEvent, { type: "user.tool_confirmation" }> | undefined {
    for (let index = this.history.length - 1; index >= 0; index--) {
      const event = this.history[index];
      if (event?.type === "user.tool_confirmation" && event.tool_use_id === toolUseId) return event;
    }
    return undefined;
  }
}
