import { type Meter, MetricName } from "@wakeloop/telemetry";
import type { SandboxManager } from "./sandbox-manager";

/**
 * This runner's sandboxes, read when metrics are collected: warm containers waiting to be claimed
 * (over every pool; pools are keyed by an environment hash, which says nothing as a label) and
 * sandboxes bound to sessions. Each runner reports its own: sum over runners.
 */
export function observeSandboxes(meter: Meter, manager: Pick<SandboxManager, "pool" | "heldCount">): void {
  const poolSize = meter.createObservableGauge(MetricName.sandboxPoolSize, {
    description: "Pre-created sandbox containers waiting in this runner's warm pools",
  });
  const active = meter.createObservableGauge(MetricName.sandboxesActive, {
    description: "Sandboxes this runner holds for sessions (running or idle-stopped)",
  });
  meter.addBatchObservableCallback(
    (result) => {
      result.observe(poolSize, manager.pool.size());
      result.observe(active, manager.heldCount());
    },
    [poolSize, active],
  );
}
