import type { ModelProvider, ToolDefinition } from "@wakeloop/contracts";
import type { Exclusion } from "./effective-tool-set";

/**
 * Each provider's models are trained on one file-editing tool: OpenAI's on `apply_patch`, Anthropic's
 * and Gemini's on `edit`. The other one is hidden — but only while the preferred tool is itself in the
 * set, so a policy that removes the preferred tool never leaves the model without a way to edit.
 */
export const PREFERRED_EDIT_TOOL: Readonly<Record<ModelProvider, { prefer: string; hide: string }>> = {
  openai: { prefer: "apply_patch", hide: "edit" },
  anthropic: { prefer: "edit", hide: "apply_patch" },
  gemini: { prefer: "edit", hide: "apply_patch" },
};

/**
 * Tools registered under a second name from another reference (personal-agent's `fetch_url` is
 * OpenClaw's `web_fetch`, one executor serving both; OpenClaw's one `browser` tool with an action is
 * personal-agent's `browser_*` family). Offering both would only spend the model's context on one
 * schema twice, so the alias is hidden while its tool is in the set; a policy that allows only the
 * alias still gets it.
 */
export const TOOL_ALIASES: Readonly<Record<string, string>> = {
  fetch_url: "web_fetch",
  browser: "browser_navigate",
};

export function applyProviderPreference<T extends ToolDefinition>(
  tools: readonly T[],
  provider: ModelProvider,
): { tools: T[]; excluded: Exclusion[] } {
  const names = new Set(tools.map((tool) => tool.name));
  const excluded: Exclusion[] = [];
  const { prefer, hide } = PREFERRED_EDIT_TOOL[provider];
  if (names.has(prefer) && names.has(hide)) {
    excluded.push({
      tool: hide,
      step: "provider_preference",
      rule: `provider_preference:${prefer}`,
      reason: `${provider} models edit files with ${prefer}; ${hide} is hidden while ${prefer} is available`,
    });
  }
  for (const [alias, of] of Object.entries(TOOL_ALIASES)) {
    if (!names.has(alias) || !names.has(of)) continue;
    excluded.push({
      tool: alias,
      step: "provider_preference",
      rule: `alias_of:${of}`,
      reason: `${alias} is another name of ${of}; it is hidden while ${of} is available`,
    });
  }
  const hidden = new Set(excluded.map((exclusion) => exclusion.tool));
  return { tools: tools.filter((tool) => !hidden.has(tool.name)), excluded };
}
