import { PassThrough } from "node:stream";
import type { SessionEvent, StreamDelta } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { LiveAnswer } from "./live-answer";

const delta = (text: string, attempt = 1): StreamDelta => ({
  type: "agent.message_delta",
  ephemeral: true,
  session_id: "sesn_a",
  wake_id: "wake_1",
  model_request_start_id: "sevt_1",
  attempt,
  index: 0,
  text,
});

const message = (text: string) =>
  ({
    id: "sevt_2",
    seq: 2,
    session_id: "sesn_a",
    type: "agent.message",
    content: [{ type: "text", text }],
  }) as unknown as SessionEvent;

function screen() {
  const out = new PassThrough();
  let text = "";
  out.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  return { live: new LiveAnswer(out), text: () => text };
}

describe("LiveAnswer", () => {
  it("prints the answer as it is written and completes it with the stored message, once", () => {
    const { live, text } = screen();
    expect(live.take(delta("Hello "))).toBe(true);
    expect(text()).toBe("Hello ");
    expect(live.writing).toBe(true);
    live.take(delta("wor"));
    // A dropped delta ("ld") is made up by the stored message.
    expect(live.take(message("Hello world."))).toBe(true);
    expect(text()).toBe("Hello world.\n");
    expect(live.writing).toBe(false);
    // A message with no preview is the caller's to print.
    expect(live.take(message("Again"))).toBe(false);
  });

  it("starts a new line when the preview starts over, and prints the stored text whole where it differs", () => {
    const { live, text } = screen();
    live.take(delta("Half an"));
    live.take(delta("Whole", 2));
    expect(text()).toBe("Half an\nWhole");
    live.take(message("Something else"));
    expect(text()).toBe("Half an\nWhole\nSomething else\n");
  });
});
