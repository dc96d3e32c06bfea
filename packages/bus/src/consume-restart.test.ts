import type { WakeJob } from "@wakeloop/contracts";
import { type NatsServer, startNatsServer } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeTestBus, openTestBus, until } from "./bus-test-fixture";
import type { Bus } from "./connect";

let server: NatsServer;
let bus: Bus;

beforeAll(async () => {
  server = await startNatsServer();
  bus = await openTestBus({}, server.url);
});

afterAll(async () => {
  await closeTestBus(bus);
  await server.stop();
});

function job(n: number): WakeJob {
  return {
    wake_id: `wake_${n}`,
    tenant_id: "tnt_1",
    session_id: "sesn_1",
    attempt: 1,
    reason: "user_message",
  };
}

describe("consume across a NATS restart", () => {
  // 60 s: the restart alone may take up to the container's startup timeout under a full CI run.
  it("keeps pulling once the connection is back", async () => {
    const stop = new AbortController();
    const handled: string[] = [];
    const running = bus.consume(bus.catalog.wakes, async ({ data }) => void handled.push(data.wake_id), {
      signal: stop.signal,
    });
    await bus.publish(bus.catalog.wakes, ["tnt_1", "sesn_1"], job(1), { msgId: "wake_1" });
    await until(() => handled.length === 1);

    const reconnected = (async () => {
      for await (const status of bus.nc.status()) if (status.type === "reconnect") return;
    })();
    await server.restart({ downMs: 500 });
    await reconnected;
    await bus.publish(bus.catalog.wakes, ["tnt_1", "sesn_1"], job(2), { msgId: "wake_2" });
    await until(() => handled.length === 2, 15_000);
    expect(handled).toEqual(["wake_1", "wake_2"]);
    stop.abort();
    await running;
  }, 60_000);
});
