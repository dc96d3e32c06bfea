import type {
  AgentSpec,
  EnvironmentSpec,
  SessionEvent,
  SessionState,
  SkillSummary,
} from "@wakeloop/contracts";
import { reduceSessionState } from "@wakeloop/session-core";
import type { RecallSection } from "../context/recall-budget";

/** What the memory service told this wake at its start; without an answer its tools are not offered. */
export interface WakeMemory {
  ready: boolean;
  /** Whether recall could find anything: false when the agent has no memory entry to recall. */
  recallable: boolean;
  /** The skills index for the system context: enabled skills, names and one-line descriptions. */
  skills: SkillSummary[];
  /** Memory entries recalled for the wake's new input, within the recall budget. */
  recalled: RecallSection[];
}

/**
 * What one wake knows of its session: the projection and the full event history, kept current from the
 * events this wake commits plus any that others (the gateway) committed in between.
 */
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
  memory: WakeMemory = { ready: false, recallable: false, skills: [], recalled: [] };
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

  /** The tool-use events that have no result yet, in the order the model made them. */
  unresolvedCalls(): Array<Extract<SessionEvent, { type: "agent.tool_use" }>> {
    const resolved = new Set<string>();
    for (const event of this.history) if (event.type === "agent.tool_result") resolved.add(event.tool_use_id);
    return this.history.filter(
      (event): event is Extract<SessionEvent, { type: "agent.tool_use" }> =>
        event.type === "agent.tool_use" && !resolved.has(event.id),
    );
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
