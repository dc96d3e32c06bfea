// The deterministic tool core: no I/O, no clock, no randomness. See ../ARCHITECTURE.md.
export {
  BatchPlan,
  type ModelToolCall,
  orderResults,
  PlannedCall,
  planBatch,
  RejectedCall,
  RejectionCode,
  RunCall,
} from "./batch-planner";
export { managedTools } from "./builtins";
export { AskUserInput, askUserTool } from "./builtins/ask-user";
export { PermissionsCheckInput, PermissionsDescribeInput, permissionTools } from "./builtins/permissions";
export { sandboxTools } from "./builtins/sandbox";
export {
  DeleteStateInput,
  GetStateInput,
  ListStateKeysInput,
  SetStateInput,
  stateTools,
} from "./builtins/state";
export { type CallFacts, type CallVerdict, callVerdict } from "./call-verdict";
export {
  EffectiveTool,
  EffectiveToolSet,
  Exclusion,
  PermissionSource,
  PipelineStep,
  sortExclusions,
} from "./effective-tool-set";
export { computeEffectiveTools, toolProviderOf } from "./effective-tools";
export { checkInput, type InputCheck, schemaProblem } from "./input-validation";
export * from "./loop-detection";
export { evaluatePermission, type ResolvedPermission, resolvePermission } from "./permission-policy";
export {
  checkPermission,
  describePermissions,
  type PermissionCheck,
  type PermissionState,
  type PermissionsDescription,
} from "./permission-tools";
export { applyPolicyPipeline, type PolicyContext, type PolicyResult } from "./policy-pipeline";
export { STANDARD_GROUPS, TOOL_PROFILES } from "./profiles";
export { applyProviderPreference, PREFERRED_EDIT_TOOL } from "./provider-preference";
export {
  type AgentRegistryOptions,
  agentToolRegistry,
  type CustomToolSpec,
  createToolRegistry,
  customToolDefinition,
  type ToolRegistry,
} from "./registry";
export { keysConflict, resolveResourceKey } from "./resource-key";
export { applyRuntimeGating, type GatingFacts, type RuntimeFacts } from "./runtime-gating";
export {
  dropStrictNulls,
  type NormalizedSchema,
  normalizeToolSchema,
  type ProviderTool,
  providerTools,
} from "./schema-normalize";
export { selectorMatches } from "./selectors";
export { type PlatformToolSettings, type SessionToolInputs, sessionEffectiveTools } from "./session-tools";
export { stableHash, stableStringify } from "./stable-json";
export { validateAgentTools, validateEnvironmentPolicy, validateToolPolicy } from "./validate-policy";
