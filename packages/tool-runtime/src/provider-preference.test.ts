import { describe, expect, it } from "vitest";
import { managedTools } from "./builtins";
import { applyProviderPreference } from "./provider-preference";

const editTools = managedTools.filter((tool) => ["edit", "apply_patch", "read"].includes(tool.name));

describe("applyProviderPreference", () => {
  it("openai keeps apply_patch and hides edit", () => {
    const result = applyProviderPreference(editTools, "openai");
    expect(result.tools.map((tool) => tool.name).sort()).toEqual(["apply_patch", "read"]);
    expect(result.excluded).toEqual([
      {
        tool: "edit",
        step: "provider_preference",
        rule: "provider_preference:apply_patch",
        reason: "openai models edit files with apply_patch; edit is hidden while apply_patch is available",
      },
    ]);
  });

  it.each(["anthropic", "gemini"] as const)("%s keeps edit and hides apply_patch", (provider) => {
    const result = applyProviderPreference(editTools, provider);
    expect(result.tools.map((tool) => tool.name).sort()).toEqual(["edit", "read"]);
    expect(result.excluded[0]).toMatchObject({ tool: "apply_patch", rule: "provider_preference:edit" });
  });

  it("never hides the only editing tool left", () => {
    const withoutPatch = editTools.filter((tool) => tool.name !== "apply_patch");
    expect(applyProviderPreference(withoutPatch, "openai")).toEqual({ tools: withoutPatch, excluded: [] });
  });
});
