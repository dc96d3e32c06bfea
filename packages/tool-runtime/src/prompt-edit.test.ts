import { describe, expect, it } from "vitest";
import { applyPromptEdit, MAX_SYSTEM_PROMPT_CHARS } from "./prompt-edit";

const base = "You are terse.\nUse metric units. Use metric units.";

describe("applyPromptEdit", () => {
  it("replaces the whole prompt, including with an empty one", () => {
    expect(applyPromptEdit(base, { operation: "replace", content: "New." })).toEqual({
      ok: true,
      prompt: "New.",
    });
    expect(applyPromptEdit(base, { operation: "replace", content: "" })).toEqual({ ok: true, prompt: "" });
  });

  it("replaces the first occurrence, or all of them with replace_all", () => {
    const edit = { operation: "find_replace", find: "metric", replace: "imperial" } as const;
    expect(applyPromptEdit(base, edit)).toEqual({
      ok: true,
      prompt: "You are terse.\nUse imperial units. Use metric units.",
    });
    expect(applyPromptEdit(base, { ...edit, replace_all: true })).toEqual({
      ok: true,
      prompt: "You are terse.\nUse imperial units. Use imperial units.",
    });
  });

  it("inserts replacement text literally, without $ patterns", () => {
    const result = applyPromptEdit("price: X", { operation: "find_replace", find: "X", replace: "$& $1 $$" });
    expect(result).toEqual({ ok: true, prompt: "price: $& $1 $$" });
  });

  it("appends and prepends on their own line unless the prompt already breaks there", () => {
    expect(applyPromptEdit("A.", { operation: "append", content: "B." })).toEqual({
      ok: true,
      prompt: "A.\nB.",
    });
    expect(applyPromptEdit("A.\n", { operation: "append", content: "B." })).toEqual({
      ok: true,
      prompt: "A.\nB.",
    });
    expect(applyPromptEdit("", { operation: "append", content: "B." })).toEqual({ ok: true, prompt: "B." });
    expect(applyPromptEdit("A.", { operation: "prepend", content: "Z." })).toEqual({
      ok: true,
      prompt: "Z.\nA.",
    });
    expect(applyPromptEdit("A.", { operation: "prepend", content: "Z.\n" })).toEqual({
      ok: true,
      prompt: "Z.\nA.",
    });
  });

  it("deletes the first occurrence", () => {
    expect(applyPromptEdit(base, { operation: "delete", content: " Use metric units." })).toEqual({
      ok: true,
      prompt: "You are terse.\nUse metric units.",
    });
  });

  it("fails with a clear error when the text is not there or a field is missing", () => {
    const notThere = applyPromptEdit(base, { operation: "find_replace", find: "verbose", replace: "x" });
    expect(notThere).toEqual({
      ok: false,
      error: expect.stringContaining('"verbose" is not in the system prompt'),
    });
    expect(applyPromptEdit(base, { operation: "delete", content: "verbose" }).ok).toBe(false);
    expect(applyPromptEdit(base, { operation: "find_replace", find: "terse" })).toEqual({
      ok: false,
      error: 'operation find_replace needs a non-empty "replace"',
    });
    expect(applyPromptEdit(base, { operation: "find_replace", find: "", replace: "x" }).ok).toBe(false);
    expect(applyPromptEdit(base, { operation: "append" })).toEqual({
      ok: false,
      error: 'operation append needs a non-empty "content"',
    });
    expect(applyPromptEdit(base, { operation: "replace" }).ok).toBe(false);
  });

  it("refuses a prompt past the spec's limit", () => {
    const result = applyPromptEdit("x".repeat(MAX_SYSTEM_PROMPT_CHARS), {
      operation: "append",
      content: "more",
    });
    expect(result).toEqual({ ok: false, error: expect.stringContaining("the limit is 200000") });
  });
});
