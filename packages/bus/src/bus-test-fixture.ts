import type { WakeJob } from "@wakeloop/contracts";
import { cleanupPrefix, testNatsUrl, testPrefix } from "@wakeloop/testing";
import type { CatalogOptions } from "./catalog";
import { type Bus, connectBus } from "./connect";
import { ensureStreams } from "./ensure-streams";

/** A bus on the shared test NATS under a prefix of its own, with the catalog's streams created. */
export async function openTestBus(catalog: CatalogOptions = {}, servers = testNatsUrl()): Promise<Bus> {
  const bus = await connectBus({ servers, prefix: testPrefix(), name: "bus-test", catalog });
  await ensureStreams(bus.jsm, bus.catalog);
  return bus;
}

export async function closeTestBus(bus: Bus): Promise<void> {
  await cleanupPrefix(bus.jsm, bus.subjects.prefix);
  await bus.close();
}

export async function until<T>(probe: () => T | Promise<T>, timeoutMs = 10_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The `n`th wake job of one test tenant, each of its own session. */
export function testWakeJob(n: number): WakeJob {
  return {
    wake_id: `wake_${n}`,
    tenant_id: "tnt_1",
    session_id: `sesn_${n}`,
    attempt: 1,
    reason: "user_message",
  };
}
