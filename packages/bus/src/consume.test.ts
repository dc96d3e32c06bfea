import { headers as natsHeaders } from "@nats-io/transport-node";
import { context } from "@opentelemetry/api";
import { MAX_JSON_DEPTH, type SessionEvent, type WakeJob, WakeloopError } from "@wakeloop/contracts";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { closeTestBus, openTestBus, testWakeJob, until } from "./bus-test-fixture";
import { WAKE_CONSUMER, withConsumer } from "./catalog";
import type { Bus } from "./connect";
import type { ConsumeBatchHandler, ConsumeHandler, ConsumeOptions } from "./consume";
import { DeadLetter } from "./dead-letter";
import { ensureConsumer } from "./ensure-streams";
import { activeTraceId, fakeSpanContext, installTestPropagation } from "./otel-test-setup";
import { encodeJson } from "./publish";

const ACK_WAIT_MS = 1_000;
const MAX_DELIVER = 3;

let bus: Bus;
let stop: AbortController;
let running: Promise<void>[];

function startConsuming(
  handler: ConsumeHandler<WakeJob>,
  concurrency = 1,
  options: Pick<ConsumeOptions, "mayPull" | "holdMs" | "maxPullBatch"> = {},
) {
  running.push(
    bus.consume(bus.catalog.wakes, handler, {
      concurrency,
      signal: stop.signal,
      retryDelayMs: () => 100,
      pullExpiresMs: 2_000,
      ...options,
    }),
  );
}

async function storedCount(stream: string): Promise<number> {
  return (await bus.jsm.streams.info(stream)).state.messages;
}

async function deadLetters(): Promise<DeadLetter[]> {
  const name = bus.catalog.deadLetters.stream.name;
  const letters: DeadLetter[] = [];
  const count = await storedCount(name);
  for (let seq = 1; seq <= count; seq++) {
    const stored = await bus.jsm.streams.getMessage(name, { seq });
    if (stored) letters.push(DeadLetter.parse(stored.json()));
  }
  return letters;
}

function startConsumingBatches(handler: ConsumeBatchHandler<WakeJob>, maxBatch: number) {
  running.push(
    bus.consumeBatches(bus.catalog.wakes, handler, {
      concurrency: 64,
      maxBatch,
      batchIntervalMs: 100,
      signal: stop.signal,
      retryDelayMs: () => 100,
      pullExpiresMs: 2_000,
    }),
  );
}

const publishJobs = (numbers: number[]) =>
  Promise.all(
    numbers.map((n) =>
      bus.publish(bus.catalog.wakes, ["tnt_1", `sesn_${n}`], testWakeJob(n), { msgId: `wake_${n}` }),
    ),
  );

const range = (count: number) => Array.from({ length: count }, (_, n) => n + 1);

const wakeConsumerInfo = () => bus.jsm.consumers.info(bus.catalog.wakes.stream.name, WAKE_CONSUMER);

beforeAll(() => installTestPropagation());

beforeEach(async () => {
  bus = await openTestBus({ wakeAckWaitMs: ACK_WAIT_MS, wakeMaxDeliver: MAX_DELIVER });
  stop = new AbortController();
  running = [];
});

afterEach(async () => {
  stop.abort();
  await Promise.all(running);
  await closeTestBus(bus);
});

describe("publish and consume", () => {
  it("delivers a typed message and acks it once the handler resolves", async () => {
    const received: WakeJob[] = [];
    startConsuming(async ({ data }) => {
      received.push(data);
    });
    const ack = await bus.publish(bus.catalog.wakes, ["tnt_1", "sesn_1"], testWakeJob(1), {
      msgId: "wake_1",
    });
    expect(ack.stream).toBe(bus.catalog.wakes.stream.name);
    await until(() => received.length === 1);
    expect(received).toEqual([testWakeJob(1)]);
    // Work-queue retention removes a message once it is acked.
    await until(async () => (await storedCount(bus.catalog.wakes.stream.name)) === 0);
  });

  it("refuses to publish a payload that does not match the schema", async () => {
    const bad = { ...testWakeJob(1), attempt: 0 };
    await expect(
      bus.publish(bus.catalog.wakes, ["tnt_1", "sesn_1"], bad, { msgId: "x" }),
    ).rejects.toMatchObject({
      code: "bus_invalid_payload",
      retryable: false,
    });
    expect(await storedCount(bus.catalog.wakes.stream.name)).toBe(0);
  });

  it("stores a message once when its msg id is published twice", async () => {
    const event: SessionEvent = {
      id: "sevt_1",
      session_id: "sesn_1",
      seq: 1,
      processed_at: null,
      created_at: new Date().toISOString(),
      type: "user.interrupt",
    };
    const args: [string, string, string] = ["tnt_1", "sesn_1", event.type];
    const first = await bus.publish(bus.catalog.events, args, event, { msgId: event.id });
    const second = await bus.publish(bus.catalog.events, args, event, { msgId: event.id });
    expect(first.duplicate).toBe(false);
    expect(second).toMatchObject({ duplicate: true, seq: first.seq });
    expect(await storedCount(bus.catalog.events.stream.name)).toBe(1);
    const stored = await bus.jsm.streams.getMessage(bus.catalog.events.stream.name, { seq: first.seq });
    expect(stored?.subject).toBe(`${bus.subjects.prefix}.evt.tnt_1.sesn_1.user.interrupt`);
  });

  it("reads the events stream through another durable consumer", async () => {
    const orchestrator = withConsumer(bus.catalog.events, {
      durable: "orchestrator",
      filterSubject: `${bus.subjects.prefix}.evt.>`,
      ackWaitMs: 5_000,
      maxDeliver: 5,
      deliverPolicy: "all",
    });
    await ensureConsumer(bus.jsm, orchestrator);
    const seen: string[] = [];
    running.push(
      bus.consume(orchestrator, async ({ data }) => void seen.push(data.id), { signal: stop.signal }),
    );
    const event: SessionEvent = {
      id: "sevt_2",
      session_id: "sesn_1",
      seq: 1,
      processed_at: null,
      created_at: new Date().toISOString(),
      type: "user.interrupt",
    };
    await bus.publish(bus.catalog.events, ["tnt_1", "sesn_1", event.type], event, { msgId: event.id });
    await until(() => seen.length === 1);
    expect(seen).toEqual(["sevt_2"]);
    // Limits retention: the event stays for other readers after this consumer acked it.
    expect(await storedCount(bus.catalog.events.stream.name)).toBe(1);
  });

  it("redelivers a message the handler did not finish within the ack wait", async () => {
    const deliveries: { count: number; at: number }[] = [];
    let releaseFirst = () => {};
    const firstHeld = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    startConsuming(async ({ deliveryCount }) => {
      deliveries.push({ count: deliveryCount, at: Date.now() });
      if (deliveryCount === 1) await firstHeld;
      else releaseFirst();
    }, 2);
    await bus.publish(bus.catalog.wakes, ["tnt_1", "sesn_1"], testWakeJob(1), { msgId: "wake_1" });
    await until(() => deliveries.length === 2);
    const [first, second] = deliveries;
    expect(second?.count).toBe(2);
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(ACK_WAIT_MS - 100);
    await until(async () => (await storedCount(bus.catalog.wakes.stream.name)) === 0);
  });

  it("does not redeliver while the handler reports working()", async () => {
    const deliveries: number[] = [];
    startConsuming(async ({ deliveryCount, working }) => {
      deliveries.push(deliveryCount);
      for (let elapsed = 0; elapsed < 2.5 * ACK_WAIT_MS; elapsed += 300) {
        working();
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
    }, 2);
    await bus.publish(bus.catalog.wakes, ["tnt_1", "sesn_1"], testWakeJob(1), { msgId: "wake_1" });
    await until(async () => (await storedCount(bus.catalog.wakes.stream.name)) === 0);
    await new Promise((resolve) => setTimeout(resolve, ACK_WAIT_MS + 200));
    expect(deliveries).toEqual([1]);
  });

  it("retries a retryable failure and dead-letters it after the last delivery", async () => {
    const deliveries: number[] = [];
    startConsuming(async ({ deliveryCount }) => {
      deliveries.push(deliveryCount);
      throw new WakeloopError("model_overloaded", "try later", { retryable: true });
    });
    await bus.publish(bus.catalog.wakes, ["tnt_1", "sesn_1"], testWakeJob(1), { msgId: "wake_1" });
    const [letter] = await until(async () => {
      const letters = await deadLetters();
      return letters.length > 0 ? letters : undefined;
    });
    expect(deliveries).toEqual([1, 2, 3]);
    expect(letter).toMatchObject({
      reason: "retries_exhausted",
      error: { code: "model_overloaded", retryable: true },
      delivery_count: MAX_DELIVER,
      subject: `${bus.subjects.prefix}.wake.tnt_1.sesn_1`,
    });
    expect(JSON.parse(letter?.data ?? "")).toEqual(testWakeJob(1));
    await until(async () => (await storedCount(bus.catalog.wakes.stream.name)) === 0);
  });

  it("acks a message whose retry succeeded", async () => {
    const deliveries: number[] = [];
    startConsuming(async ({ deliveryCount }) => {
      deliveries.push(deliveryCount);
      if (deliveryCount === 1) throw new Error("connection reset");
    });
    await bus.publish(bus.catalog.wakes, ["tnt_1", "sesn_1"], testWakeJob(1), { msgId: "wake_1" });
    await until(
      async () => deliveries.length === 2 && (await storedCount(bus.catalog.wakes.stream.name)) === 0,
    );
    expect(deliveries).toEqual([1, 2]);
    expect(await deadLetters()).toEqual([]);
  });

  it("dead-letters at once on a non-retryable WakeloopError", async () => {
    const deliveries: number[] = [];
    startConsuming(async ({ deliveryCount }) => {
      deliveries.push(deliveryCount);
      throw new WakeloopError("session_not_found", "gone", { details: { session_id: "sesn_1" } });
    });
    await bus.publish(bus.catalog.wakes, ["tnt_1", "sesn_1"], testWakeJob(1), { msgId: "wake_1" });
    const [letter] = await until(async () => {
      const letters = await deadLetters();
      return letters.length > 0 ? letters : undefined;
    });
    expect(letter).toMatchObject({
      reason: "handler_rejected",
      error: { code: "session_not_found", retryable: false, details: { session_id: "sesn_1" } },
      delivery_count: 1,
    });
    await until(async () => (await storedCount(bus.catalog.wakes.stream.name)) === 0);
    expect(deliveries).toEqual([1]);
  });

  it("dead-letters an invalid message with its zod issues, original data and headers", async () => {
    const handled: WakeJob[] = [];
    startConsuming(async ({ data }) => void handled.push(data));
    const headers = natsHeaders();
    headers.set("x-origin", "hand-written");
    const raw = { wake_id: "wake_1", tenant_id: "tnt_1", session_id: "sesn_1", attempt: "first" };
    await bus.js.publish(bus.subjects.wake("tnt_1", "sesn_1"), encodeJson(raw), { headers, msgID: "raw_1" });
    await bus.js.publish(bus.subjects.wake("tnt_1", "sesn_1"), "{not json", { msgID: "raw_2" });
    const letters = await until(async () => {
      const all = await deadLetters();
      return all.length === 2 ? all : undefined;
    });
    const [invalid, notJson] = letters;
    expect(invalid).toMatchObject({
      reason: "invalid_message",
      error: { code: "bus_invalid_message", retryable: false },
    });
    const { issues } = z
      .object({ issues: z.array(z.object({ path: z.array(z.string()) })) })
      .parse(invalid?.error.details);
    expect(issues.map((issue) => issue.path.join("."))).toEqual(
      expect.arrayContaining(["attempt", "reason"]),
    );
    expect(JSON.parse(invalid?.data ?? "")).toEqual(raw);
    expect(invalid?.headers["x-origin"]).toEqual(["hand-written"]);
    expect(invalid?.headers["Nats-Msg-Id"]).toEqual(["raw_1"]);
    expect(notJson).toMatchObject({ reason: "invalid_message", data: "{not json" });
    expect(handled).toEqual([]);
    await until(async () => (await storedCount(bus.catalog.wakes.stream.name)) === 0);
  });

  it("dead-letters a message nested past MAX_JSON_DEPTH before its schema or handler walks it", async () => {
    const handled: WakeJob[] = [];
    startConsuming(async ({ data }) => void handled.push(data));
    const deep = `{"wake_id":${"[".repeat(10_000)}${"]".repeat(10_000)}}`;
    await bus.js.publish(bus.subjects.wake("tnt_1", "sesn_1"), deep, { msgID: "deep_1" });
    const [letter] = await until(async () => {
      const all = await deadLetters();
      return all.length === 1 ? all : undefined;
    });
    expect(letter).toMatchObject({
      reason: "invalid_message",
      error: { code: "bus_invalid_message", retryable: false, details: { issues: [{ code: "too_deep" }] } },
    });
    expect(letter?.error.message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
    expect(handled).toEqual([]);
    await until(async () => (await storedCount(bus.catalog.wakes.stream.name)) === 0);
  });

  it("runs the handler inside the trace context the message was published from", async () => {
    const traceIds: (string | undefined)[] = [];
    startConsuming(async () => void traceIds.push(activeTraceId()));
    const { ctx, span } = fakeSpanContext();
    await context.with(ctx, () =>
      bus.publish(bus.catalog.wakes, ["tnt_1", "sesn_1"], testWakeJob(1), { msgId: "wake_1" }),
    );
    await until(() => traceIds.length === 1);
    expect(traceIds).toEqual([span.traceId]);
  });

  it("never runs more handlers at once than its concurrency", async () => {
    let active = 0;
    let peak = 0;
    let done = 0;
    startConsuming(async () => {
      active += 1;
      peak = Math.max(peak, active);
      await new Promise((resolve) => setTimeout(resolve, 50));
      active -= 1;
      done += 1;
    }, 3);
    await Promise.all(
      Array.from({ length: 12 }, (_, n) =>
        bus.publish(bus.catalog.wakes, ["tnt_1", `sesn_${n}`], testWakeJob(n), { msgId: `wake_${n}` }),
      ),
    );
    await until(() => done === 12);
    expect(peak).toBe(3);
  });

  it("pulls nothing while mayPull refuses, with free slots, and resumes once it allows", async () => {
    let allowed = false;
    let asked = 0;
    const received: string[] = [];
    startConsuming(
      async ({ data }) => {
        received.push(data.wake_id);
      },
      8,
      {
        mayPull: () => {
          asked += 1;
          return allowed;
        },
        holdMs: 20,
      },
    );
    await Promise.all(
      [1, 2, 3].map((n) =>
        bus.publish(bus.catalog.wakes, ["tnt_1", `sesn_${n}`], testWakeJob(n), { msgId: `wake_${n}` }),
      ),
    );
    await until(() => asked >= 5);
    expect(received).toEqual([]);
    expect(await storedCount(bus.catalog.wakes.stream.name)).toBe(3);

    allowed = true;
    await until(() => received.length === 3);
    expect(received.sort()).toEqual(["wake_1", "wake_2", "wake_3"]);
  });

  it("takes no more than maxPullBatch between two answers of mayPull", async () => {
    let answers = 0;
    let allowed = true;
    const received: string[] = [];
    startConsuming(
      async ({ data }) => {
        received.push(data.wake_id);
      },
      8,
      {
        mayPull: () => {
          answers += 1;
          return allowed;
        },
        maxPullBatch: 2,
        holdMs: 20,
      },
    );
    await until(() => answers >= 1);
    allowed = false;
    await Promise.all(
      [1, 2, 3, 4, 5].map((n) =>
        bus.publish(bus.catalog.wakes, ["tnt_1", `sesn_${n}`], testWakeJob(n), { msgId: `wake_${n}` }),
      ),
    );
    // The pull opened while allowed takes two; then the refusal holds the other three back.
    await until(() => received.length === 2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(received).toHaveLength(2);
    allowed = true;
    await until(() => received.length === 5);
  });

  it("finishes in-flight work and stops pulling on abort", async () => {
    let finished = 0;
    const started: number[] = [];
    startConsuming(async ({ data }) => {
      started.push(Number(data.wake_id.slice(5)));
      await new Promise((resolve) => setTimeout(resolve, 300));
      finished += 1;
    });
    await bus.publish(bus.catalog.wakes, ["tnt_1", "sesn_1"], testWakeJob(1), { msgId: "wake_1" });
    await until(() => started.length === 1);
    stop.abort();
    await Promise.all(running);
    expect(finished).toBe(1);
    await bus.publish(bus.catalog.wakes, ["tnt_1", "sesn_2"], testWakeJob(2), { msgId: "wake_2" });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(started).toEqual([1]);
    // The first was acked before the consumer stopped; the second waits for the next worker.
    expect(await storedCount(bus.catalog.wakes.stream.name)).toBe(1);
  });
});

describe("consumeBatches", () => {
  it("hands the messages over in few batches of at most maxBatch and acks each once", async () => {
    await publishJobs(range(40));
    const batches: { wakeId: string; deliveryCount: number }[][] = [];
    startConsumingBatches(async (batch) => {
      batches.push(batch.map(({ data, deliveryCount }) => ({ wakeId: data.wake_id, deliveryCount })));
    }, 16);
    await until(async () => (await storedCount(bus.catalog.wakes.stream.name)) === 0);
    expect(batches.map((batch) => batch.length)).toEqual([16, 16, 8]);
    const handled = batches.flat();
    expect(handled.map(({ wakeId }) => wakeId).sort()).toEqual(
      range(40)
        .map((n) => `wake_${n}`)
        .sort(),
    );
    expect(handled.every(({ deliveryCount }) => deliveryCount === 1)).toBe(true);
    // Past the ack wait: nothing comes back.
    await new Promise((resolve) => setTimeout(resolve, ACK_WAIT_MS + 200));
    expect(batches.flat()).toHaveLength(40);
    expect(await wakeConsumerInfo()).toMatchObject({ num_ack_pending: 0, num_redelivered: 0 });
  });

  it("collects the messages that arrive within the interval of the first into one batch", async () => {
    const batches: string[][] = [];
    startConsumingBatches(async (batch) => void batches.push(batch.map(({ data }) => data.wake_id)), 64);
    await publishJobs([1]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await publishJobs([2, 3]);
    await until(() => batches.flat().length === 3);
    expect(batches).toEqual([["wake_1", "wake_2", "wake_3"]]);
  });

  it("redelivers every message of a batch whose handler failed", async () => {
    await publishJobs(range(5));
    const batches: { wakeId: string; deliveryCount: number }[][] = [];
    startConsumingBatches(async (batch) => {
      batches.push(batch.map(({ data, deliveryCount }) => ({ wakeId: data.wake_id, deliveryCount })));
      if (batches.length === 1)
        throw new WakeloopError("db_unavailable", "Postgres away", { retryable: true });
    }, 16);
    await until(async () => (await storedCount(bus.catalog.wakes.stream.name)) === 0);
    const [failed, ...retried] = batches;
    expect(failed?.map(({ wakeId }) => wakeId).sort()).toEqual(range(5).map((n) => `wake_${n}`));
    expect(
      retried
        .flat()
        .map(({ wakeId, deliveryCount }) => `${wakeId}#${deliveryCount}`)
        .sort(),
    ).toEqual(range(5).map((n) => `wake_${n}#2`));
    expect(await deadLetters()).toEqual([]);
  });

  it("dead-letters each message of a batch its handler rejected for good", async () => {
    await publishJobs([1, 2]);
    let calls = 0;
    startConsumingBatches(async () => {
      calls += 1;
      throw new WakeloopError("session_not_found", "gone");
    }, 16);
    const letters = await until(async () => {
      const all = await deadLetters();
      return all.length === 2 ? all : undefined;
    });
    expect(letters.map((letter) => letter.reason)).toEqual(["handler_rejected", "handler_rejected"]);
    expect(letters.map((letter) => JSON.parse(letter.data).wake_id).sort()).toEqual(["wake_1", "wake_2"]);
    await until(async () => (await storedCount(bus.catalog.wakes.stream.name)) === 0);
    expect(calls).toBe(1);
  });

  it("dead-letters an invalid message and hands the valid rest of its batch over", async () => {
    await publishJobs([1]);
    const raw = { wake_id: "wake_bad", tenant_id: "tnt_1", session_id: "sesn_bad", attempt: "first" };
    await bus.js.publish(bus.subjects.wake("tnt_1", "sesn_bad"), encodeJson(raw), { msgID: "raw_1" });
    await publishJobs([2]);
    const batches: string[][] = [];
    startConsumingBatches(async (batch) => void batches.push(batch.map(({ data }) => data.wake_id)), 16);
    const [letter] = await until(async () => {
      const all = await deadLetters();
      return all.length === 1 ? all : undefined;
    });
    expect(letter).toMatchObject({
      reason: "invalid_message",
      error: { code: "bus_invalid_message", retryable: false },
    });
    expect(JSON.parse(letter?.data ?? "")).toEqual(raw);
    await until(async () => (await storedCount(bus.catalog.wakes.stream.name)) === 0);
    expect(batches).toEqual([["wake_1", "wake_2"]]);
  });
});
