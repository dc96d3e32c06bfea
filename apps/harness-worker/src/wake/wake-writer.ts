import { type SessionEvent, toWellFormedText } from "@wakeloop/contracts";
import {
  appendInTx,
  type Database,
  finishWake,
  type NewEvent,
  readEvents,
  type TraceHeaders,
  withTenant,
} from "@wakeloop/db";
import type { Kysely } from "kysely";
import type { SessionView } from "./session-view";
import { type LedgerEntry, type LedgerUpdate, recordPlanned, recordSettled } from "./tool-ledger";

export interface WriteInput {
  events: NewEvent[];
  /** Tool calls recorded as `planned` with the events that announce them (invariant 4). */
  planned?: LedgerEntry[];
  /** The batch plan the planned calls belong to, stored with them. */
  batchPlan?: unknown;
  /** Ledger outcomes committed with the result events. */
  settled?: LedgerUpdate[];
  /** Closes the wake in the same transaction, so a session is never idle under an open wake. */
  finish?: "completed" | "failed" | "cancelled";
}

/**
 * Every write of one wake, fenced by its lease epoch (invariant 3). Results may be buffered and sent
 * with the next write: a crash before that commit leaves the call `planned`/`running` in the ledger,
 * which recovery treats as an unknown outcome (invariant 7).
 */
export class WakeWriter {
  private buffered: WriteInput = { events: [], planned: [], settled: [] };

  constructor(
    private readonly db: Kysely<Database>,
    private readonly view: SessionView,
    private readonly wake: { id: string; epoch: number; traceId: string | null; traceHeaders?: TraceHeaders },
  ) {}

  /** Queues results to commit with the next `write`. */
  buffer(input: WriteInput): void {
    this.buffered.events.push(...input.events);
    this.buffered.planned?.push(...(input.planned ?? []));
    this.buffered.settled?.push(...(input.settled ?? []));
  }

  async write(input: WriteInput): Promise<SessionEvent[]> {
    // Tool output (files, command output, MCP and custom results) may hold a NUL or a lone surrogate,
    // which Postgres refuses: repaired here, the one door of every wake's writes, so no output can
    // fail the append and with it every later wake of the session.
    const events = toWellFormedText([...this.buffered.events, ...input.events]).map((event) => ({
      ...event,
      wake_id: this.wake.id,
      trace_id: this.wake.traceId,
    }));
    const planned = toWellFormedText([...(this.buffered.planned ?? []), ...(input.planned ?? [])]);
    const settled = toWellFormedText([...(this.buffered.settled ?? []), ...(input.settled ?? [])]);
    this.buffered = { events: [], planned: [], settled: [] };
    const { view, wake } = this;
    const committed = await withTenant(this.db, view.tenantId, async (trx) => {
      const appended = await appendInTx(trx, {
        tenantId: view.tenantId,
        sessionId: view.sessionId,
        events,
        fence: wake.epoch,
        ...(wake.traceHeaders ? { traceHeaders: wake.traceHeaders } : {}),
      });
      const scope = { tenantId: view.tenantId, sessionId: view.sessionId, wakeId: wake.id };
      if (input.batchPlan !== undefined)
        await recordPlanned(trx, scope, toWellFormedText(input.batchPlan), planned);
      await recordSettled(trx, view.tenantId, settled);
      if (input.finish)
        await finishWake(trx, {
          tenantId: view.tenantId,
          wakeId: wake.id,
          epoch: wake.epoch,
          status: input.finish,
        });
      return appended;
    });
    await this.catchUp(committed);
    return committed;
  }

  /** Marks a non-idempotent call as started, so a crash from here on is an unknown outcome. */
  async markRunning(callId: string): Promise<void> {
    const { tenantId } = this.view;
    await withTenant(this.db, tenantId, (trx) =>
      trx
        .updateTable("tool_calls")
        .set({ status: "running", updated_at: new Date() })
        .where("id", "=", callId)
        .where("tenant_id", "=", tenantId)
        .execute(),
    );
  }

  /** Brings the view up to date, reading events others committed between this wake's writes. */
  async catchUp(committed: readonly SessionEvent[] = []): Promise<void> {
    const first = committed[0]?.seq ?? Number.POSITIVE_INFINITY;
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
}
