import { UpdateAgentRequest } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { providedFields } from "./provided-fields";

describe("providedFields", () => {
  it("keeps only the fields the client sent, not the schema's defaults", () => {
    const raw = { system: "be brief" };
    const parsed = UpdateAgentRequest.parse(raw);
    expect(parsed.tools).toEqual([]);
    expect(providedFields(parsed, raw)).toEqual({ system: "be brief" });
  });

  it("keeps the parsed value (with nested defaults) of a sent field", () => {
    const raw = { model: { provider: "anthropic", id: "claude" } };
    expect(providedFields(UpdateAgentRequest.parse(raw), raw)).toEqual({
      model: { provider: "anthropic", id: "claude", max_output_tokens: 4096, context_window_tokens: 200000 },
    });
  });
});
