import { MAX_JSON_DEPTH } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { parseToolCallInput } from "./tool-call-input";

describe("parseToolCallInput", () => {
  it("reads a JSON object", () => {
    expect(parseToolCallInput('{"a": [1, {"b": null}]}')).toEqual({ input: { a: [1, { b: null }] } });
  });

  it("reads no arguments at all as an empty object", () => {
    expect(parseToolCallInput("")).toEqual({ input: {} });
    expect(parseToolCallInput("  ")).toEqual({ input: {} });
  });

  it.each([
    ['{"a": ', "not valid JSON"],
    ["null", "got null"],
    ['"text"', "got a string"],
    ["42", "got a number"],
    ["[]", "got an array"],
  ])("reports %s as an input error with the raw text", (raw, reason) => {
    const parsed = parseToolCallInput(raw);
    expect(parsed.input).toEqual({});
    expect(parsed.inputError?.raw).toBe(raw);
    expect(parsed.inputError?.message).toContain(reason);
  });

  it("reports arguments nested past MAX_JSON_DEPTH as an input error, which nothing walks further", () => {
    const raw = `{"a":${"[".repeat(10_000)}${"]".repeat(10_000)}}`;
    const parsed = parseToolCallInput(raw);
    expect(parsed.input).toEqual({});
    expect(parsed.inputError?.raw).toBe(raw);
    expect(parsed.inputError?.message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
  });
});
