import { describe, expect, it } from "vitest";
import { createSecretScrubber, REDACTED } from "./secret-scrubber";

describe("createSecretScrubber", () => {
  const apiKey = `wl_${"A1b2-C3d4_".repeat(4)}xyz`;

  it("replaces every occurrence of a configured secret, longest first", () => {
    const scrub = createSecretScrubber(["hunter2hunter2", "hunter2hunter2-extended"]);
    expect(scrub("a hunter2hunter2-extended b hunter2hunter2")).toBe(`a ${REDACTED} b ${REDACTED}`);
  });

  it("ignores configured values too short to be told apart from ordinary text", () => {
    expect(createSecretScrubber(["abc"])("abcdef")).toBe("abcdef");
  });

  it("replaces Wakeloop API keys and provider key shapes it was never told about", () => {
    const scrub = createSecretScrubber();
    expect(apiKey).toHaveLength(46);
    expect(scrub(`Bearer ${apiKey}.`)).toBe(`Bearer ${REDACTED}.`);
    expect(scrub('{"detail":"bad key sk-ant-api03-abcdefghijklmnopqrstuv"}')).toBe(
      `{"detail":"bad key ${REDACTED}"}`,
    );
    expect(scrub("key=sk-proj-0123456789abcdefghijKLMN")).toBe(`key=${REDACTED}`);
  });

  it("keeps identifiers that only resemble a key", () => {
    const scrub = createSecretScrubber();
    expect(scrub("database wl_test_0a1b2c3d created")).toBe("database wl_test_0a1b2c3d created");
    expect(scrub(`x${apiKey}`)).toBe(`x${apiKey}`);
    expect(scrub("sk-short")).toBe("sk-short");
  });
});
