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

  it("hides fetch_url while web_fetch, the same tool, is offered; keeps it when it is the only one", () => {
    const fetchTools = managedTools.filter((tool) =>
      ["web_fetch", "fetch_url", "web_read"].includes(tool.name),
    );
    const both = applyProviderPreference(fetchTools, "anthropic");
    expect(both.tools.map((tool) => tool.name).sort()).toEqual(["web_fetch", "web_read"]);
    expect(both.excluded).toEqual([
      {
        tool: "fetch_url",
        step: "provider_preference",
        rule: "alias_of:web_fetch",
        reason: "fetch_url is another name of web_fetch; it is hidden while web_fetch is available",
      },
    ]);
    const aliasOnly = fetchTools.filter((tool) => tool.name !== "web_fetch");
    expect(applyProviderPreference(aliasOnly, "openai")).toEqual({ tools: aliasOnly, excluded: [] });
  });

  it("never hides the only editing tool left", () => {
    const withoutPatch = editTools.filter((tool) => tool.name !== "apply_patch");
    expect(applyProviderPreference(withoutPatch, "openai")).toEqual({ tools: withoutPatch, excluded: [] });
  });

  it("hides OpenClaw's browser while the browser_* family is offered; keeps it when it is the only one", () => {
    const browserTools = managedTools.filter((tool) => tool.group === "browser");
    const result = applyProviderPreference(browserTools, "anthropic");
    expect(result.tools.map((tool) => tool.name)).not.toContain("browser");
    expect(result.excluded).toEqual([
      {
        tool: "browser",
        step: "provider_preference",
        rule: "alias_of:browser_navigate",
        reason:
          "browser is another name of browser_navigate; it is hidden while browser_navigate is available",
      },
    ]);
    const only = browserTools.filter((tool) => tool.name === "browser");
    expect(applyProviderPreference(only, "openai")).toEqual({ tools: only, excluded: [] });
  });
});
