import { describe, expect, it } from "vitest";
import { modelOverride } from "./model-override";

const anthropic = { provider: "anthropic" as const, id: "claude-sonnet-4-5" };
const openai = { provider: "openai" as const, id: "gpt-4.1" };
const local = { provider: "openai_compatible" as const, id: "llama-3-70b" };

describe("modelOverride", () => {
  it("accepts a model of the agent's provider, with or without the provider prefix", () => {
    expect(modelOverride(anthropic, "claude-haiku-4-5")).toEqual({ ok: true, model: "claude-haiku-4-5" });
    expect(modelOverride(openai, "openai/gpt-4.1-mini")).toEqual({ ok: true, model: "gpt-4.1-mini" });
    expect(modelOverride(openai, "o4-mini")).toEqual({ ok: true, model: "o4-mini" });
    // An OpenAI-compatible server names its models freely, slashes included.
    expect(modelOverride(local, "meta-llama/Llama-3.1-8B")).toEqual({
      ok: true,
      model: "meta-llama/Llama-3.1-8B",
    });
  });

  it("refuses another provider's model, saying which provider the agent talks to", () => {
    const other = modelOverride(openai, "anthropic/claude-haiku-4-5");
    expect(other).toEqual({ ok: false, message: expect.stringContaining("this agent talks to openai") });
    const family = modelOverride(anthropic, "gpt-4.1-mini");
    expect(family).toEqual({ ok: false, message: expect.stringContaining("not a model of anthropic") });
    expect(modelOverride(openai, "claude-haiku-4-5").ok).toBe(false);
  });

  it("refuses what is not a model id", () => {
    expect(modelOverride(local, "two words")).toEqual({
      ok: false,
      message: expect.stringContaining("is not a model id"),
    });
    expect(modelOverride(local, "").ok).toBe(false);
    expect(modelOverride(local, "x".repeat(201)).ok).toBe(false);
  });
});
