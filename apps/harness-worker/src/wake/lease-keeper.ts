import { type Database, type HeldLease, renewLeases } from "@wakeloop/db";
import type { Logger } from "@wakeloop/telemetry";
import type { Kysely } from "kysely";

interface KeptLease extends HeldLease {
  tenantId: string;
  log: Logger;
  working: () => void;
  lost: AbortController;
}

/*
 * One renewal tick per worker process, not one timer and one transaction per wake: a worker holds
 * hundreds of I/O-bound wakes (WORKER_SLOTS), and renewing each on its own would cost a transaction
 * (four round trips, as every tenant-scoped write) per wake every ttl/3 — 800 statements a second for
 * 1 000 wakes at the default ttl. A tick renews each tenant's leases in one statement instead.
 * Renewers are keyed by the database handle and ttl, which a process has one of: wakes are started
 * with those and nothing else that could carry a shared renewer.
 */
class LeaseRenewer {
  readonly #held = new Map<string, KeptLease>();
  #timer: NodeJS.Timeout | undefined;
  #renewing = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly ttlMs: number,
  ) {}

  add(lease: KeptLease): void {
    this.#held.set(lease.wakeId, lease);
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => void this.#tick(), Math.max(50, Math.floor(this.ttlMs / 3)));
    this.#timer.unref();
  }

  remove(lease: KeptLease): void {
    if (this.#held.get(lease.wakeId) === lease) this.#held.delete(lease.wakeId);
    if (this.#held.size > 0) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async #tick(): Promise<void> {
    if (this.#renewing) return;
    this.#renewing = true;
    const byTenant = new Map<string, KeptLease[]>();
    for (const lease of this.#held.values()) {
      lease.working();
      const leases = byTenant.get(lease.tenantId) ?? [];
      leases.push(lease);
      byTenant.set(lease.tenantId, leases);
    }
    await Promise.all([...byTenant].map(([tenantId, leases]) => this.#renew(tenantId, leases)));
    this.#renewing = false;
  }

  async #renew(tenantId: string, leases: KeptLease[]): Promise<void> {
    let renewed: Set<string>;
    try {
      renewed = await renewLeases(this.db, tenantId, leases, this.ttlMs);
    } catch (err) {
      // Once per batch, not per wake: an outage would otherwise log every held wake each tick.
      leases[0]?.log.warn(
        { err, tenant_id: tenantId, leases: leases.length },
        "lease renewal failed; retrying",
      );
      return;
    }
    for (const lease of leases) {
      // A wake that ended while the statement ran closed its own lease: that is not a loss.
      if (renewed.has(lease.wakeId) || this.#held.get(lease.wakeId) !== lease) continue;
      lease.log.warn({ wake_id: lease.wakeId }, "lease lost; stopping the wake");
      lease.lost.abort(new Error("lease lost"));
    }
  }
}

const renewers = new WeakMap<Kysely<Database>, Map<number, LeaseRenewer>>();

function renewerFor(db: Kysely<Database>, ttlMs: number): LeaseRenewer {
  const byTtl = renewers.get(db) ?? new Map<number, LeaseRenewer>();
  renewers.set(db, byTtl);
  const renewer = byTtl.get(ttlMs) ?? new LeaseRenewer(db, ttlMs);
  byTtl.set(ttlMs, renewer);
  return renewer;
}

/**
 * Renews the wake's lease every third of its ttl (with the worker's other leases) and tells
 * JetStream the job is still being worked on. A failed renewal (the sweeper re-queued the wake)
 * aborts `lost`: every later append would be refused by the fence anyway, this only stops the work
 * sooner.
 */
export function keepLease(deps: {
  db: Kysely<Database>;
  log: Logger;
  tenantId: string;
  wakeId: string;
  epoch: number;
  ttlMs: number;
  working: () => void;
}): { lost: AbortSignal; stop(): void } {
  const renewer = renewerFor(deps.db, deps.ttlMs);
  const lease: KeptLease = {
    tenantId: deps.tenantId,
    wakeId: deps.wakeId,
    epoch: deps.epoch,
    log: deps.log,
    working: deps.working,
    lost: new AbortController(),
  };
  renewer.add(lease);
  return { lost: lease.lost.signal, stop: () => renewer.remove(lease) };
}
