import type { StreamDelta, WakeloopError } from "@wakeloop/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeTestBus, openTestBus, until } from "./bus-test-fixture";
import type { Bus } from "./connect";

let bus: Bus;

beforeAll(async () => {
  bus = await openTestBus();
});

afterAll(() => closeTestBus(bus));

const delta = (session: string, text: string): StreamDelta => ({
  type: "agent.message_delta",
  ephemeral: true,
  session_id: session,
  wake_id: "wake_1",
  model_request_start_id: "sevt_1",
  attempt: 1,
  index: 0,
  text,
});

describe("stream deltas", () => {
  it("reach the subscriber of that tenant's session only, in order", async () => {
    const mine: StreamDelta[] = [];
    const others: StreamDelta[] = [];
    const sub = bus.subscribeDeltas("tnt_1", "sesn_1", (received) => void mine.push(received));
    const otherTenant = bus.subscribeDeltas("tnt_2", "sesn_1", (received) => void others.push(received));
    await bus.nc.flush();
    for (const text of ["Hel", "lo", "!"]) bus.publishDelta("tnt_1", delta("sesn_1", text));
    bus.publishDelta("tnt_1", delta("sesn_2", "elsewhere"));
    await until(() => mine.length === 3);
    await bus.nc.flush();
    expect(mine.map((received) => received.type === "agent.message_delta" && received.text)).toEqual([
      "Hel",
      "lo",
      "!",
    ]);
    expect(others).toEqual([]);
    sub.unsubscribe();
    otherTenant.unsubscribe();
  });

  it("refuses to publish a delta that does not match its schema", () => {
    expect(() => bus.publishDelta("tnt_1", { ...delta("sesn_1", "x"), attempt: 0 })).toThrow(
      expect.objectContaining({ code: "bus_invalid_payload" }),
    );
  });

  it("drops an invalid delta or one naming another session, and reports it", async () => {
    const errors: WakeloopError[] = [];
    const handled: StreamDelta[] = [];
    const sub = bus.subscribeDeltas("tnt_1", "sesn_3", (received) => void handled.push(received), {
      onError: (err) => void errors.push(err),
    });
    await bus.nc.flush();
    const subject = bus.subjects.delta("tnt_1", "sesn_3");
    bus.nc.publish(subject, JSON.stringify({ type: "agent.message_delta", text: "no envelope" }));
    bus.nc.publish(subject, JSON.stringify(delta("sesn_4", "forged")));
    await until(() => errors.length === 2);
    expect(errors.map((err) => err.code)).toEqual(["bus_invalid_message", "bus_invalid_message"]);
    expect(handled).toEqual([]);
    sub.unsubscribe();
  });
});
