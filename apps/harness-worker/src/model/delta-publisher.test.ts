import { type Bus, connectBus } from "@wakeloop/bus";
import type { StreamDelta } from "@wakeloop/contracts";
import { createLogger } from "@wakeloop/telemetry";
import { testNatsUrl, testPrefix } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DeltaTarget, deltaPublisher } from "./delta-publisher";

const log = createLogger({ service: "delta-publisher-test", level: "silent" });
const target: DeltaTarget = {
  tenantId: "tnt_1",
  sessionId: "sesn_1",
  wakeId: "wake_1",
  requestStartId: "sevt_1",
};

let bus: Bus;

beforeAll(async () => {
  bus = await connectBus({ servers: testNatsUrl(), prefix: testPrefix(), name: "delta-publisher-test" });
});
afterAll(() => bus?.close());

/** The messages the session's subscribers get, as they arrive. */
async function listen(): Promise<StreamDelta[]> {
  const received: StreamDelta[] = [];
  bus.subscribeDeltas(target.tenantId, target.sessionId, (delta) => void received.push(delta));
  await bus.nc.flush();
  return received;
}

const settled = async (received: StreamDelta[], count: number) => {
  await expect.poll(() => received.length).toBeGreaterThanOrEqual(count);
  await bus.nc.flush();
  return received;
};

describe("deltaPublisher", () => {
  it("sends the pieces of one read merged per part, each part once, in order", async () => {
    const received = await listen();
    const publish = deltaPublisher(bus, target, log);
    publish({ type: "text_delta", index: 0, text: "Hel" }, 1);
    publish({ type: "text_delta", index: 0, text: "lo" }, 1);
    publish({ type: "tool_input_delta", index: 1, id: "toolu_1", name: "set_state", partialJson: '{"k"' }, 1);
    publish({ type: "tool_input_delta", index: 1, id: "toolu_1", name: "set_state", partialJson: ":1}" }, 1);
    // A retry starts again: never merged into the attempt before it.
    publish({ type: "text_delta", index: 0, text: "Again" }, 2);
    await settled(received, 3);
    expect(received).toEqual([
      {
        type: "agent.message_delta",
        ephemeral: true,
        session_id: "sesn_1",
        wake_id: "wake_1",
        model_request_start_id: "sevt_1",
        attempt: 1,
        index: 0,
        text: "Hello",
      },
      expect.objectContaining({
        type: "agent.tool_use_input_delta",
        tool_call_id: "toolu_1",
        name: "set_state",
        partial_json: '{"k":1}',
      }),
      expect.objectContaining({ type: "agent.message_delta", attempt: 2, text: "Again" }),
    ]);
  });

  it("sends a read's pieces apart from the next read's: no token waits for more", async () => {
    const received = await listen();
    const publish = deltaPublisher(bus, { ...target, requestStartId: "sevt_2" }, log);
    publish({ type: "text_delta", index: 0, text: "one " }, 1);
    await new Promise((resolve) => setImmediate(resolve));
    publish({ type: "text_delta", index: 0, text: "two" }, 1);
    await settled(received, 2);
    expect(received.map((delta) => delta.type === "agent.message_delta" && delta.text)).toEqual([
      "one ",
      "two",
    ]);
  });
});
