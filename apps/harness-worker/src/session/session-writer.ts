import { type SessionEvent, toWellFormedText } from "@wakeloop/contracts";
import {
  type AgentStateWrite,
  type Appended,
  appendAt,
  type Database,
  markToolCallRunning,
  type NewEvent,
  readEvents,
  type ToolCallRecord,
  type ToolCallUpdate,
  type TraceHeaders,
  withTenant,
} from "@wakeloop/db";
import type { Kysely } from "kysely";
import type { SessionView } from "./session-view";

export interface WriteInput {
  events: NewEvent[];
  /** Calls entering the ledger with the events that announce them: planned, or settled in this commit. */
  record?: ToolCallRecord[];
  /** The batch plan the recorded calls belong to, stored with them. */
  batchPlan?: unknown;
  /** Outcomes of calls recorded by an earlier commit, committed with their result events. */
  settle?: ToolCallUpdate[];
  /** The agent's state writes of the calls that ran for this commit (`set_state`), made with it. */
  agentState?: AgentStateWrite[];
  /** Closes the wake in the same commit, so a session is never idle under an open wake. */
  finish?: "completed" | "failed" | "cancelled";
}

export interface WakeLease {
  id: string;
  epoch: number;
  traceId: string | null;
  traceHeaders?: TraceHeaders;
}

/**
 * Every write of one wake, fenced by its lease epoch (invariant 3), each one `wl_append` from the head
 * the view holds. Results may be buffered and sent with the next write: a crash before that commit
 * leaves the call `planned`/`running` in the ledger, which recovery treats as an unknown outcome
 * (invariant 7).
 */
export class SessionWriter {
  private buffered: { events: NewEvent[]; settle: ToolCallUpdate[] } = { events: [], settle: [] };

  constructor(
    private readonly db: Kysely<Database>,
    private readonly view: SessionView,
    private readonly wake: WakeLease,
  ) {}

  get wakeId(): string {
    return this.wake.id;
  }

  /** Queues results to commit with the next write. */
  buffer(input: Pick<WriteInput, "events" | "settle">): void {
    this.buffered.events.push(...input.events);
    this.buffered.settle.push(...(input.settle ?? []));
  }

  async write(input: WriteInput): Promise<SessionEvent[]> {
    const appended = await this.append(this.db, input);
    await this.catchUp(appended);
    return appended.events;
  }

  /**
   * One commit for work whose effects live in our own Postgres (state tools): `work` runs in the
   * wake's tenant transaction and returns what to append, which commits with those effects or not at
   * all, so such a call can never have an unknown outcome.
   */
  async writeWith(work: (db: Kysely<Database>) => Promise<WriteInput>): Promise<SessionEvent[]> {
    const appended = await withTenant(this.db, this.view.tenantId, async (trx) =>
      this.append(trx, await work(trx)),
    );
    await this.catchUp(appended);
    return appended.events;
  }

  /** Marks a call with effects outside Postgres as started, so a crash from here is an unknown outcome. */
  markRunning(callId: string): Promise<void> {
    return markToolCallRunning(this.db, this.view.tenantId, callId);
  }

  /**
   * Brings the view up to date, reading events others committed between this wake's writes. An append
   * made from the view's own head folded the projection over its events already: the view takes it.
   */
  private async catchUp({ events: committed, head }: Appended): Promise<void> {
    const first = committed[0]?.seq ?? Number.POSITIVE_INFINITY;
    if (first === this.view.lastSeq + 1) {
      this.view.applyFolded(committed, head.state);
      return;
    }
    if (first > this.view.lastSeq + 1) {
      const missing = await readEvents(this.db, {
        tenantId: this.view.tenantId,
        sessionId: this.view.sessionId,
        afterSeq: this.view.lastSeq,
        limit: Number.isFinite(first) ? first - this.view.lastSeq - 1 : 10_000,
      });
      this.view.apply(missing);
    }
    this.view.apply(committed);
  }

  private async append(db: Kysely<Database>, input: WriteInput): Promise<Appended> {
    // Tool output (files, command output, MCP and custom results) may hold a NUL or a lone surrogate,
    // which Postgres refuses: repaired here, the one door of every wake's writes, so no output can
    // fail the append and with it every later wake of the session.
    const { wake, view } = this;
    const events = toWellFormedText([...this.buffered.events, ...input.events]).map((event) => ({
      ...event,
      wake_id: wake.id,
      trace_id: wake.traceId,
    }));
    const settle = toWellFormedText([...this.buffered.settle, ...(input.settle ?? [])]);
    this.buffered = { events: [], settle: [] };
    const record = input.record?.length ? toWellFormedText(input.record) : undefined;
    const ledger = record !== undefined || settle.length > 0 || input.batchPlan !== undefined;
    return appendAt(db, {
      tenantId: view.tenantId,
      sessionId: view.sessionId,
      head: { lastSeq: view.lastSeq, state: view.state },
      events,
      fence: wake.epoch,
      ...(wake.traceHeaders && { traceHeaders: wake.traceHeaders }),
      ...(ledger && {
        toolCalls: {
          wakeId: wake.id,
          ...(record && { record }),
          ...(input.batchPlan !== undefined && { batchPlan: toWellFormedText(input.batchPlan) }),
          ...(settle.length > 0 && { settle }),
        },
      }),
      ...(input.agentState && { agentState: input.agentState }),
      ...(input.finish && { finishWake: { wakeId: wake.id, epoch: wake.epoch, status: input.finish } }),
    });
  }
}
