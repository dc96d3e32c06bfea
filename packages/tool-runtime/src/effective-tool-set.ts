import { ToolDefinition } from "@wakeloop/contracts";
import { z } from "zod";
import { compareNames } from "./compare-names";

/**
 * The steps of DESIGN §5 (after the naming profile), in the order they run; an exclusion names the first
 * step that removed a tool.
 */
export const PipelineStep = z.enum([
  "tool_names",
  "profile",
  "provider_profile",
  "global",
  "provider",
  "agent",
  "agent_provider",
  "environment",
  "sub_session_depth",
  "owner_only",
  "runtime_gating",
  "provider_preference",
]);
export type PipelineStep = z.infer<typeof PipelineStep>;

/**
 * Why one tool is missing. `rule` is compact and stable (`agent.deny:shell_*`, `profile:minimal`,
 * `availability:sandbox.ready`); `reason` is the sentence shown to people and to the model.
 */
export const Exclusion = z.object({
  tool: z.string(),
  step: PipelineStep,
  rule: z.string(),
  reason: z.string(),
});
export type Exclusion = z.infer<typeof Exclusion>;

/**
 * Where a tool's effective permission policy came from (agent config > toolset default > tool default;
 * an MCP tool's from its server's settings, named by the tool's `permissionSetting`).
 */
export const PermissionSource = z.enum([
  "agent_config",
  "toolset_default",
  "mcp_server_config",
  "tool_default",
]);
export type PermissionSource = z.infer<typeof PermissionSource>;

/** A tool offered this turn; `permissionPolicy` is already the effective one. */
export const EffectiveTool = ToolDefinition.extend({ permissionSource: PermissionSource });
export type EffectiveTool = z.infer<typeof EffectiveTool>;

export const EffectiveToolSet = z.object({
  tools: z.array(EffectiveTool),
  excluded: z.array(Exclusion),
});
export type EffectiveToolSet = z.infer<typeof EffectiveToolSet>;

const indexes = new WeakMap<EffectiveToolSet, ReadonlyMap<string, EffectiveTool>>();

/**
 * The set's tools by name. A set is not changed once computed and a wake plans every step against the
 * same one, so each set is indexed once instead of at every planning.
 */
export function toolsByName(effective: EffectiveToolSet): ReadonlyMap<string, EffectiveTool> {
  let index = indexes.get(effective);
  if (index === undefined) {
    index = new Map(effective.tools.map((tool) => [tool.name, tool]));
    indexes.set(effective, index);
  }
  return index;
}

const stepOrder = new Map(PipelineStep.options.map((step, index) => [step, index]));

/** By tool name, then pipeline step: the stable order every exclusion list is returned in. */
export function sortExclusions(excluded: readonly Exclusion[]): Exclusion[] {
  return [...excluded].sort(
    (a, b) => compareNames(a.tool, b.tool) || (stepOrder.get(a.step) ?? 0) - (stepOrder.get(b.step) ?? 0),
  );
}
