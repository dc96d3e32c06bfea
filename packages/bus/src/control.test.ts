import { context } from "@opentelemetry/api";
import type { ControlMessage, WakeloopError } from "@wakeloop/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeTestBus, openTestBus, until } from "./bus-test-fixture";
import type { Bus } from "./connect";
import { activeTraceId, fakeSpanContext, installTestPropagation } from "./otel-test-setup";

let bus: Bus;

beforeAll(async () => {
  installTestPropagation();
  bus = await openTestBus();
});

afterAll(() => closeTestBus(bus));

describe("control messages", () => {
  it("reaches the subscriber of that session only, inside the sender's trace context", async () => {
    const received: { message: ControlMessage; traceId: string | undefined }[] = [];
    const other: ControlMessage[] = [];
    const mine = bus.subscribeControl(
      "sesn_1",
      (message) => void received.push({ message, traceId: activeTraceId() }),
    );
    const theirs = bus.subscribeControl("sesn_2", (message) => void other.push(message));
    await bus.nc.flush();
    const { ctx, span } = fakeSpanContext();
    context.with(ctx, () =>
      bus.publishControl({ type: "interrupt", session_id: "sesn_1", event_id: "sevt_9" }),
    );
    await until(() => received.length === 1);
    expect(received).toEqual([
      { message: { type: "interrupt", session_id: "sesn_1", event_id: "sevt_9" }, traceId: span.traceId },
    ]);
    expect(other).toEqual([]);
    mine.unsubscribe();
    theirs.unsubscribe();
  });

  it("reports an invalid control message instead of handling it", async () => {
    const errors: WakeloopError[] = [];
    const handled: ControlMessage[] = [];
    const sub = bus.subscribeControl("sesn_3", (message) => void handled.push(message), {
      onError: (err) => void errors.push(err),
    });
    await bus.nc.flush();
    bus.nc.publish(bus.subjects.ctl("sesn_3"), JSON.stringify({ type: "explode", session_id: "sesn_3" }));
    await until(() => errors.length === 1);
    expect(errors[0]?.code).toBe("bus_invalid_message");
    expect(handled).toEqual([]);
    expect(() => bus.publishControl({ type: "interrupt", session_id: "", event_id: "e" })).toThrow(
      expect.objectContaining({ code: "bus_invalid_payload" }),
    );
    sub.unsubscribe();
  });
});
