import { randomBytes } from "node:crypto";
import type { EnvironmentConfig } from "@wakeloop/contracts";
import { LABEL } from "./labels";
import { type ProvisionDeps, type Provisioned, provisionContainer } from "./provision";

/** After a failed creation (Docker down, image missing) the pool waits this long before trying again. */
const FILL_RETRY_MS = 5_000;

type Pool = {
  environment: EnvironmentConfig;
  substrate: string | null;
  ready: Provisioned[];
  creating: number;
  /** Last register or claim: a pool nobody asked for in `idleMs` is dropped with its containers. */
  lastUsedAt: number;
};

/**
 * Pre-created, pre-hardened, started containers (agent answering) per pool key, each with a fresh
 * workspace (mounted) that becomes the claiming session's workspace. A claim is a pop; the pool refills
 * in the background, one container at a time so a burst of claims does not stampede Docker.
 * Registrations are bounded: at most `maxPools` pools at once (further environments start cold), and
 * a pool that no session registered or claimed for `idleMs` is dropped, so environments used once do
 * not hold containers for good and many environments cannot pile up idle containers.
 */
export class WarmPool {
  private readonly pools = new Map<string, Pool>();
  private stopped = false;

  constructor(
    private readonly deps: ProvisionDeps,
    private readonly runnerId: string,
    private readonly limits: { idleMs: number; maxPools: number },
  ) {}

  /** Keeps `environment.warm_pool_size` containers ready for this key, when there is room for a pool. */
  register(key: string, environment: EnvironmentConfig, substrate: string | null, now = Date.now()): void {
    const pool = this.pools.get(key);
    if (pool) {
      pool.environment = environment;
      pool.lastUsedAt = now;
    } else if (this.pools.size < this.limits.maxPools) {
      this.pools.set(key, { environment, substrate, ready: [], creating: 0, lastUsedAt: now });
    } else {
      this.deps.log.warn({ pool: key, maxPools: this.limits.maxPools }, "no room for another warm pool");
      return;
    }
    this.fill(key);
  }

  claim(key: string): Provisioned | null {
    const pool = this.pools.get(key);
    if (!pool) return null;
    pool.lastUsedAt = Date.now();
    let claimed: Provisioned | null = null;
    while (claimed === null && pool.ready.length > 0) {
      const candidate = pool.ready.shift() as Provisioned;
      if (candidate.container.connected) claimed = candidate;
      else void this.discard(candidate);
    }
    this.fill(key);
    return claimed;
  }

  /** Ready containers over every pool. */
  size(): number {
    let ready = 0;
    for (const pool of this.pools.values()) ready += pool.ready.length;
    return ready;
  }

  /** Ready containers per pool key. */
  sizes(): Record<string, number> {
    return Object.fromEntries([...this.pools].map(([key, pool]) => [key, pool.ready.length]));
  }

  /** Resolves once every pool holds its target (for tests and benchmarks). */
  async waitFull(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const full = () =>
      [...this.pools.values()].every((pool) => pool.ready.length >= pool.environment.warm_pool_size);
    while (!full()) {
      if (Date.now() > deadline) throw new Error(`warm pools did not fill in ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /** Drops the pools unused for `limits.idleMs`: their containers go, and nothing refills them. */
  async dropIdle(now = Date.now()): Promise<void> {
    for (const [key, pool] of [...this.pools]) {
      if (now - pool.lastUsedAt < this.limits.idleMs) continue;
      this.pools.delete(key);
      this.deps.log.info({ pool: key }, "dropping an unused warm pool");
      await Promise.all(pool.ready.splice(0).map((entry) => this.discard(entry)));
    }
  }

  /** Removes every pooled container: they hold no session state. */
  async drain(): Promise<void> {
    this.stopped = true;
    const all = [...this.pools.values()].flatMap((pool) => pool.ready.splice(0));
    await Promise.all(all.map((entry) => this.discard(entry)));
  }

  private fill(key: string): void {
    const pool = this.pools.get(key);
    if (!pool || this.stopped) return;
    if (pool.ready.length + pool.creating >= pool.environment.warm_pool_size || pool.creating > 0) return;
    pool.creating += 1;
    let retryInMs = 0;
    void this.createOne(key, pool)
      .then((entry) => {
        if (this.stopped || this.pools.get(key) !== pool) void this.discard(entry);
        else pool.ready.push(entry);
      })
      .catch((error) => {
        retryInMs = FILL_RETRY_MS;
        this.deps.log.warn({ err: error, pool: key }, "could not add a warm sandbox");
      })
      .finally(() => {
        pool.creating -= 1;
        if (this.pools.get(key) === pool && pool.ready.length < pool.environment.warm_pool_size)
          setTimeout(() => this.fill(key), retryInMs).unref();
      });
  }

  private async createOne(key: string, pool: Pool): Promise<Provisioned> {
    const entry = await provisionContainer(this.deps, {
      name: `wl-${this.runnerId}-p-${randomBytes(6).toString("hex")}`,
      labels: { [LABEL.runner]: this.runnerId, [LABEL.pool]: key },
      environment: pool.environment,
      substrate: pool.substrate,
    });
    try {
      await entry.container.connect();
    } catch (error) {
      await this.discard(entry);
      throw error;
    }
    return entry;
  }

  private async discard(entry: Provisioned): Promise<void> {
    await entry.container.remove().catch(() => undefined);
    await this.deps.workspaces.remove(entry.workspace).catch(() => undefined);
    if (entry.network !== null) await this.deps.networks.remove(entry.network).catch(() => undefined);
  }
}
