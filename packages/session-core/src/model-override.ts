import { type ModelConfig, WakeloopError } from "@wakeloop/contracts";

export type ModelChoice = { ok: true; model: string } | { ok: false; message: string };

const PROVIDERS: readonly ModelConfig["provider"][] = ["anthropic", "openai", "openai_compatible"];

/** Model ids each hosted provider serves; an OpenAI-compatible server names its own models freely. */
const FAMILIES: Partial<Record<ModelConfig["provider"], { pattern: RegExp; example: string }>> = {
  anthropic: { pattern: /^claude-/, example: "claude-haiku-4-5" },
  openai: { pattern: /^(gpt-|chatgpt-|o\d|codex-)/, example: "gpt-4.1-mini" },
};

const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$/;

/**
 * Whether a session may run `requested` instead of its agent's model (`spawn_session(model)`, a
 * scheduled task's `model`). The session keeps its agent's provider connection (credentials, base
 * URL), so the model must be one that provider serves: an optional `provider/` prefix must name the
 * agent's provider, and a hosted provider's model id must be of its family. Pure.
 */
export function modelOverride(agent: Pick<ModelConfig, "provider" | "id">, requested: string): ModelChoice {
  const slash = requested.indexOf("/");
  const prefix = slash > 0 ? requested.slice(0, slash) : "";
  const named = PROVIDERS.find((provider) => provider === prefix);
  const id = named === undefined ? requested.trim() : requested.slice(slash + 1).trim();
  if (named !== undefined && named !== agent.provider) {
    return {
      ok: false,
      message: `model ${requested} is a ${named} model, but this agent talks to ${agent.provider}; choose a ${agent.provider} model or run the task with another agent`,
    };
  }
  if (!MODEL_ID.test(id)) {
    return {
      ok: false,
      message: `model ${JSON.stringify(requested)} is not a model id: use letters, digits and . _ : / @ + - (at most 200 characters)`,
    };
  }
  const family = FAMILIES[agent.provider];
  if (family !== undefined && !family.pattern.test(id)) {
    return {
      ok: false,
      message: `model ${id} is not a model of ${agent.provider} (this agent's provider); use one like ${family.example}, or omit model to keep ${agent.id}`,
    };
  }
  return { ok: true, model: id };
}

/** The model a session or task runs, or null for the agent's; a refused choice is an `invalid_request`. */
export function chosenModel(
  agent: Pick<ModelConfig, "provider" | "id">,
  requested: string | undefined,
): string | null {
  if (requested === undefined) return null;
  const choice = modelOverride(agent, requested);
  if (!choice.ok) throw new WakeloopError("invalid_request", choice.message);
  return choice.model;
}
