import { RetentionPolicy } from "@nats-io/jetstream";
import { afterEach, describe, expect, it } from "vitest";
import { closeTestBus, openTestBus } from "./bus-test-fixture";
import { createCatalog } from "./catalog";
import type { Bus } from "./connect";
import { ensureStream, ensureStreams, removeConsumer } from "./ensure-streams";
import { subjects } from "./subjects";

let bus: Bus | undefined;

afterEach(async () => {
  if (bus) await closeTestBus(bus);
  bus = undefined;
});

describe("ensureStreams", () => {
  it("creates the catalog's streams and consumer as DESIGN §8 lays them out", async () => {
    bus = await openTestBus();
    const p = bus.subjects.prefix;
    const events = await bus.jsm.streams.info(bus.catalog.events.stream.name);
    expect(events.config).toMatchObject({
      subjects: [`${p}.evt.>`],
      retention: "limits",
      storage: "file",
      duplicate_window: 5 * 60 * 1e9,
    });
    const wakes = await bus.jsm.streams.info(bus.catalog.wakes.stream.name);
    expect(wakes.config).toMatchObject({ subjects: [`${p}.wake.>`], retention: "workqueue" });
    const dlq = await bus.jsm.streams.info(bus.catalog.deadLetters.stream.name);
    expect(dlq.config).toMatchObject({ subjects: [`${p}.dlq.>`], retention: "limits" });
    const workers = await bus.jsm.consumers.info(bus.catalog.wakes.stream.name, "harness-workers");
    expect(workers.config).toMatchObject({ ack_policy: "explicit", ack_wait: 30e9, max_deliver: 5 });
  });

  it("is idempotent and applies changed settings to what exists", async () => {
    bus = await openTestBus();
    await ensureStreams(bus.jsm, bus.catalog);
    const changed = createCatalog(bus.subjects, {
      wakeAckWaitMs: 2_000,
      wakeMaxDeliver: 3,
      duplicateWindowMs: 180_000,
    });
    await ensureStreams(bus.jsm, changed);
    const workers = await bus.jsm.consumers.info(changed.wakes.stream.name, "harness-workers");
    expect(workers.config).toMatchObject({ ack_wait: 2e9, max_deliver: 3 });
    const events = await bus.jsm.streams.info(changed.events.stream.name);
    expect(events.config.duplicate_window).toBe(180e9);
  });

  it("refuses a stream whose retention cannot be changed in place", async () => {
    bus = await openTestBus();
    const spec = bus.catalog.wakes.stream;
    await bus.jsm.streams.delete(spec.name);
    await bus.jsm.streams.add({
      name: spec.name,
      subjects: spec.subjects,
      retention: RetentionPolicy.Limits,
    });
    await expect(ensureStream(bus.jsm, spec)).rejects.toMatchObject({ code: "bus_stream_config_conflict" });
  });

  it("says why a single server refuses replicated streams, instead of starting without them", async () => {
    bus = await openTestBus();
    const spec = { ...bus.catalog.events.stream, name: `${bus.catalog.events.stream.name}_R3`, replicas: 3 };
    spec.subjects = [`${spec.subjects[0]?.replace(".evt.>", ".r3.>")}`];
    await expect(ensureStream(bus.jsm, spec)).rejects.toMatchObject({
      code: "bus_stream_setup_failed",
      message: expect.stringMatching(/_R3: .*replicas/),
      retryable: false,
    });
  });

  it("removes a retired consumer once, and reports one already gone", async () => {
    bus = await openTestBus();
    const stream = bus.catalog.wakes.stream.name;
    expect(await removeConsumer(bus.jsm, stream, "harness-workers")).toBe(true);
    await expect(bus.jsm.consumers.info(stream, "harness-workers")).rejects.toThrow();
    expect(await removeConsumer(bus.jsm, stream, "harness-workers")).toBe(false);
  });

  it("refuses a duplicate window shorter than two minutes", () => {
    expect(() => createCatalog(subjects("wl"), { duplicateWindowMs: 60_000 })).toThrow(RangeError);
  });
});
