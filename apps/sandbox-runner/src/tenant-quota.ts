import { WakeloopError } from "@wakeloop/contracts";

/**
 * The cap on one tenant's sandboxes on this runner (`SANDBOX_MAX_PER_TENANT`). Creations in flight
 * count too, and a place is taken before the creation's first await, so a burst of `ensure`s for new
 * sessions cannot overshoot it.
 */
export class TenantQuota {
  private readonly creating = new Map<string, number>();

  constructor(
    private readonly maxPerTenant: number,
    /** Sandboxes the runner holds for the tenant (running or idle-stopped, until released). */
    private readonly held: (tenantId: string) => number,
  ) {}

  /** Takes a place for a new sandbox of `tenantId`; the returned function gives it back. */
  reserve(tenantId: string): () => void {
    const count = this.held(tenantId) + (this.creating.get(tenantId) ?? 0);
    if (count >= this.maxPerTenant) {
      throw new WakeloopError(
        "sandbox_quota_exceeded",
        `tenant ${tenantId} already holds ${count} sandboxes on this runner (SANDBOX_MAX_PER_TENANT ${this.maxPerTenant}); release a session's sandbox first`,
      );
    }
    this.creating.set(tenantId, (this.creating.get(tenantId) ?? 0) + 1);
    return () => {
      const left = (this.creating.get(tenantId) ?? 1) - 1;
      if (left === 0) this.creating.delete(tenantId);
      else this.creating.set(tenantId, left);
    };
  }
}
