import { describe, expect, it } from "vitest";
import { createStreamSlots } from "./stream-slots";

describe("stream slots", () => {
  it("refuses a key's stream past the limit until one of its streams ends, other keys unaffected", () => {
    const slots = createStreamSlots(2);
    const first = slots.acquire("key_a");
    slots.acquire("key_a");
    expect(() => slots.acquire("key_a")).toThrow(expect.objectContaining({ code: "quota_exceeded" }));
    expect(() => slots.acquire("key_b")).not.toThrow();
    first();
    first();
    expect(() => slots.acquire("key_a")).not.toThrow();
    expect(() => slots.acquire("key_a")).toThrow(expect.objectContaining({ code: "quota_exceeded" }));
  });
});
