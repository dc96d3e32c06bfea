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

export function applyProviderPreference<T extends ToolDefinition>(
  tools: readonly T[],
  provider: ModelProvider,
): { tools: T[]; excluded: Exclusion[] } {
  const { prefer, hide } = PREFERRED_EDIT_TOOL[provider];
  if (!tools.some((tool) => tool.name === prefer) || !tools.some((tool) => tool.name === hide)) {
    return { tools: [...tools], excluded: [] };
  }
  return {
    tools: tools.filter((tool) => tool.name !== hide),
    excluded: [
      {
        tool: hide,
        step: "provider_preference",
        rule: `provider_preference:${prefer}`,
        reason: `${provider} models edit files with ${prefer}; ${hide} is hidden while ${prefer} is available`,
      },
    ],
  };
}
