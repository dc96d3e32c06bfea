import { type WakeJob, WakeloopError } from "@wakeloop/contracts";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { closeTestBus, openTestBus, until } from "./bus-test-fixture";
import { WAKE_CONSUMER } from "./catalog";
import type { Bus } from "./connect";
import type { ConsumeBatchHandler } from "./consume";
import { DeadLetter } from "./dead-letter";
import { encodeJson } from "./publish";

// Against the shared test NATS, under a prefix of this file's own: the wake stream's work-queue
// retention removes a message once it is acked, so an empty stream means every message was acked.

const ACK_WAIT_MS = 1_000;
const MAX_DELIVER = 3;

function job(n: number): WakeJob {
  return {
    wake_id: `wake_${n}`,
    tenant_id: "tnt_1",
    session_id: `sesn_${n}`,
    attempt: 1,
    reason: "user_message",
  };
}

let bus: Bus;
let stop: AbortController;
let running: Promise<void>[];

function startConsuming(handler: ConsumeBatchHandler<WakeJob>, maxBatch: number) {
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
      bus.publish(bus.catalog.wakes, ["tnt_1", `sesn_${n}`], job(n), { msgId: `wake_${n}` }),
    ),
  );

const range = (count: number) => Array.from({ length: count }, (_, n) => n + 1);

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

const wakeConsumerInfo = () => bus.jsm.consumers.info(bus.catalog.wakes.stream.name, WAKE_CONSUMER);

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

describe("consumeBatches", () => {
  it("hands the messages over in few batches of at most maxBatch and acks each once", async () => {
    await publishJobs(range(40));
    const batches: { wakeId: string; deliveryCount: number }[][] = [];
    startConsuming(async (batch) => {
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
    startConsuming(async (batch) => void batches.push(batch.map(({ data }) => data.wake_id)), 64);
    await publishJobs([1]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await publishJobs([2, 3]);
    await until(() => batches.flat().length === 3);
    expect(batches).toEqual([["wake_1", "wake_2", "wake_3"]]);
  });

  it("redelivers every message of a batch whose handler failed", async () => {
    await publishJobs(range(5));
    const batches: { wakeId: string; deliveryCount: number }[][] = [];
    startConsuming(async (batch) => {
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
    startConsuming(async () => {
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
    startConsuming(async (batch) => void batches.push(batch.map(({ data }) => data.wake_id)), 16);
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
