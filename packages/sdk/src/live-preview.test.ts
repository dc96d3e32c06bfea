import type { SessionEvent, StreamDelta } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { LivePreview } from "./live-preview";

const delta = (text: string, request = "sevt_1", attempt = 1): StreamDelta => ({
  type: "agent.message_delta",
  ephemeral: true,
  session_id: "sesn_a",
  wake_id: "wake_1",
  model_request_start_id: request,
  attempt,
  index: 0,
  text,
});

const stored = (type: string, fields: Record<string, unknown> = {}) =>
  ({ id: "sevt_x", seq: 9, session_id: "sesn_a", type, ...fields }) as unknown as SessionEvent;

describe("LivePreview", () => {
  it("builds the text from deltas and ends it with the stored answer", () => {
    const preview = new LivePreview();
    expect(preview.apply(delta("Hel"))).toBe(true);
    expect(preview.apply(delta("lo"))).toBe(true);
    expect(preview.text).toBe("Hello");
    expect(preview.apply(stored("agent.message"))).toBe(true);
    expect(preview.text).toBe("");
    // The request ended: a delta of it arriving late is no new answer.
    expect(preview.apply(delta(" late"))).toBe(false);
    expect(preview.text).toBe("");
  });

  it("starts over on a retry and ignores the older attempt's stragglers", () => {
    const preview = new LivePreview();
    preview.apply(delta("Half an ans"));
    preview.apply(delta("Whole", "sevt_1", 2));
    expect(preview.apply(delta("wer", "sevt_1", 1))).toBe(false);
    preview.apply(delta(" answer", "sevt_1", 2));
    expect(preview.text).toBe("Whole answer");
  });

  it("ends a request on its span.model_request_end, e.g. one interrupted before any message", () => {
    const preview = new LivePreview();
    preview.apply(delta("cut o"));
    expect(preview.apply(stored("span.model_request_end", { model_request_start_id: "sevt_1" }))).toBe(true);
    expect(preview.apply(delta("ff"))).toBe(false);
    expect(preview.apply(delta("Next", "sevt_2"))).toBe(true);
    expect(preview.text).toBe("Next");
  });
});
