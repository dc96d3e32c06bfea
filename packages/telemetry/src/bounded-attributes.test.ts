import { describe, expect, it } from "vitest";
import { boundedAttributes, OTHER_LABEL_VALUE } from "./bounded-attributes";

describe("boundedAttributes", () => {
  const attributes = () => boundedAttributes(2, (provider: string, model: string) => ({ provider, model }));

  it("returns the same object for the same values, so recording allocates none", () => {
    const of = attributes();
    const first = of("openai", "gpt");
    expect(of("openai", "gpt")).toBe(first);
    expect(first).toEqual({ provider: "openai", model: "gpt" });
    expect(Object.isFrozen(first)).toBe(true);
  });

  it("tells combinations apart even when joined values would collide", () => {
    const of = attributes();
    expect(of("a", "bc")).not.toBe(of("ab", "c"));
  });

  it("records every combination past the limit under _other, keeping known ones", () => {
    const of = attributes();
    of("openai", "gpt");
    of("anthropic", "claude");
    const other = of("compatible", "tenant-model-3");
    expect(other).toEqual({ provider: OTHER_LABEL_VALUE, model: OTHER_LABEL_VALUE });
    expect(of("compatible", "tenant-model-4")).toBe(other);
    expect(of("openai", "gpt")).toEqual({ provider: "openai", model: "gpt" });
  });
});
