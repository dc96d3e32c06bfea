import type { ModelConfig, ModelProvider } from "@wakeloop/contracts";
import { type EffectiveToolSet, sortExclusions } from "./effective-tool-set";
import { resolvePermission } from "./permission-policy";
import { applyPolicyPipeline, type PolicyContext } from "./policy-pipeline";
import { applyProviderPreference } from "./provider-preference";
import { applyRuntimeGating, type RuntimeFacts } from "./runtime-gating";

/**
 * The tools offered to the model this turn (DESIGN §5): registry → policy pipeline → runtime gating →
 * provider preference, with each tool's effective permission policy. A pure function of its inputs:
 * tools come sorted by name and exclusions by tool then step, so equal inputs give byte-identical JSON.
 */
export function computeEffectiveTools(ctx: PolicyContext, facts: RuntimeFacts): EffectiveToolSet {
  const policy = applyPolicyPipeline(ctx);
  const gated = applyRuntimeGating(policy.tools, { ...facts, subSessionDepth: ctx.subSessionDepth });
  const preferred = applyProviderPreference(gated.tools, ctx.provider);
  return {
    tools: preferred.tools.map((tool) => {
      const permission = resolvePermission(tool, ctx.agent.tools);
      return { ...tool, permissionPolicy: permission.policy, permissionSource: permission.source };
    }),
    excluded: sortExclusions([...policy.excluded, ...gated.excluded, ...preferred.excluded]),
  };
}

/** The tool dialect of a model: OpenAI-compatible servers speak OpenAI's. */
export function toolProviderOf(model: Pick<ModelConfig, "provider">): ModelProvider {
  return model.provider === "openai_compatible" ? "openai" : model.provider;
}
