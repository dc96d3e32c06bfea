import { afterEach, describe, expect, it } from "vitest";
import { closeTestBus, openTestBus } from "./bus-test-fixture";
import type { Bus } from "./connect";
import { createStreamPublisher, type StreamMessage } from "./stream-publisher";

let bus: Bus | undefined;

afterEach(async () => {
  if (bus) await closeTestBus(bus);
  bus = undefined;
});

const encoder = new TextEncoder();

function message(target: Bus, session: string, seq: number, subject?: string): StreamMessage {
  return {
    subject: subject ?? target.subjects.evt("tnt_1", session, "user.interrupt"),
    data: encoder.encode(JSON.stringify({ session_id: session, seq })),
    msgId: `sevt_${session}_${seq}`,
    headers: { traceparent: `00-${"a".repeat(32)}-${"b".repeat(16)}-01` },
  };
}

describe("stream publisher", () => {
  it("stores a round in order, each message once by its msg id, and says which were repeats", async () => {
    const target = await openTestBus();
    bus = target;
    const publisher = createStreamPublisher(target.nc, target.inbox());
    const first = Array.from({ length: 50 }, (_, index) => message(target, "sesn_a", index + 1));
    expect(await publisher.publishAll(first, 5_000)).toEqual(
      first.map(() => ({ ok: true, duplicate: false })),
    );
    const again = await publisher.publishAll(
      [message(target, "sesn_a", 50), message(target, "sesn_a", 51)],
      5_000,
    );
    expect(again).toEqual([
      { ok: true, duplicate: true },
      { ok: true, duplicate: false },
    ]);
    publisher.close();

    const stream = target.catalog.events.stream.name;
    const consumer = await target.js.consumers.get(stream);
    const stored: { seq: number; msgId: string; traceparent: string }[] = [];
    while (stored.length < 51) {
      for await (const msg of await consumer.fetch({ max_messages: 51 - stored.length, expires: 5_000 })) {
        stored.push({
          seq: msg.json<{ seq: number }>().seq,
          msgId: msg.headers?.get("Nats-Msg-Id") ?? "",
          traceparent: msg.headers?.get("traceparent") ?? "",
        });
      }
    }
    expect(stored.map((entry) => entry.seq)).toEqual(Array.from({ length: 51 }, (_, index) => index + 1));
    expect(stored.every((entry) => entry.msgId === `sevt_sesn_a_${entry.seq}`)).toBe(true);
    expect(stored[0]?.traceparent).toBe(`00-${"a".repeat(32)}-${"b".repeat(16)}-01`);
    expect((await target.jsm.streams.info(stream)).state.messages).toBe(51);
  });

  it("fails the messages no stream stores or acks, and only those", async () => {
    const target = await openTestBus();
    bus = target;
    const publisher = createStreamPublisher(target.nc, target.inbox());
    // A plain subscriber takes this subject and never answers: its publish can only time out.
    const silent = target.nc.subscribe(`${target.subjects.prefix}.silent`);
    const acks = await publisher.publishAll(
      [
        message(target, "sesn_a", 1),
        message(target, "sesn_a", 2, `${target.subjects.prefix}.nowhere`),
        message(target, "sesn_a", 3, `${target.subjects.prefix}.silent`),
        message(target, "sesn_a", 4),
      ],
      500,
    );
    silent.unsubscribe();
    publisher.close();
    expect(acks.map((ack) => ack.ok)).toEqual([true, false, false, true]);
    expect(acks[1]).toMatchObject({ error: { message: "no stream stores this subject" } });
    expect(acks[2]).toMatchObject({ error: { message: "no ack within the timeout" } });
  });
});
