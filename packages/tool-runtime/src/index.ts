// The deterministic tool core: no I/O, no clock, no randomness. See ../ARCHITECTURE.md.

export { AGENT_CODE_LIMITS, agentCodeNameProblem, checkAgentCode, libraryClosure } from "./agent-code";
export { type AgentDefinedToolSpec, agentToolName, storedAgentToolName } from "./agent-defined-tools";
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
export {
  AGENT_CODE_GROUPS,
  agentCodeTools,
  CreateLibraryInput,
  CreateToolInput,
  CreateUiComponentInput,
  ListToolsInput,
  NameInput,
  ToolNameInput,
  UpdateLibraryInput,
  UpdateToolInput,
  UpdateUiComponentInput,
} from "./builtins/agent-code";
export { AskUserInput, askUserTool } from "./builtins/ask-user";
export {
  DbSchemaInput,
  DbSqlInput,
  dataTools,
  Intelligence,
  LlmGenerateInput,
} from "./builtins/data";
export { memoryTools } from "./builtins/memory";
export {
  AgentCompareSetupInput,
  Lineage,
  navigationTools,
  SessionGetEventsInput,
  SessionGetTraceInput,
  SessionListChildrenInput,
  SessionListInput,
  SessionRefInput,
} from "./builtins/navigation";
export {
  OutcomeDefineInput,
  OutcomeEvaluateInput,
  OutcomeGradeInput,
  OutcomeHistoryInput,
  outcomeTools,
} from "./builtins/outcomes";
export { PermissionsCheckInput, PermissionsDescribeInput, permissionTools } from "./builtins/permissions";
export { sandboxTools } from "./builtins/sandbox";
export {
  EditSystemPromptInput,
  PromptEditOperation,
  ReadSystemPromptInput,
  selfEditTools,
} from "./builtins/self-edit";
export {
  DeleteStateInput,
  GetStateInput,
  ListStateKeysInput,
  SetStateInput,
  stateTools,
} from "./builtins/state";
export {
  ReportResultInput,
  SessionsSendInput,
  SPAWN_ALIASES,
  SpawnSessionInput,
  SubagentsInput,
  subSessionTools,
} from "./builtins/sub-sessions";
export {
  CancelReminderInput,
  CreateScheduledTaskInput,
  ListScheduledTasksInput,
  ScheduledTaskIdInput,
  SetReminderInput,
  timeTools,
} from "./builtins/time";
export { TOOL_SEARCH, ToolSearchInput, toolSearchTool } from "./builtins/tool-search";
export { clientUiCallProblem, uiTools } from "./builtins/ui";
export { VaultListInput, vaultTools } from "./builtins/vault";
export { WEB_FETCH_TOOLS, WebFetchInput, WebReadInput, WebSearchInput, webTools } from "./builtins/web";
export { type CallFacts, type CallVerdict, callVerdict } from "./call-verdict";
export {
  type ContextBudget,
  type ContextBudgetInputs,
  describeContextBudget,
  type PressureLevel,
} from "./context-pressure";
export {
  EffectiveTool,
  EffectiveToolSet,
  Exclusion,
  PermissionSource,
  PipelineStep,
  sortExclusions,
  toolsByName,
} from "./effective-tool-set";
export { computeEffectiveTools, toolProviderOf } from "./effective-tools";
export { checkInput, checkValue, type InputCheck, schemaProblem } from "./input-validation";
export * from "./loop-detection";
export {
  mcpToolDefinition,
  mcpToolDefinitions,
  mcpToolName,
  reservedToolNameProblem,
  sessionMcpServers,
} from "./mcp-tools";
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
export { applyPromptEdit, MAX_SYSTEM_PROMPT_CHARS, type PromptEditResult } from "./prompt-edit";
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
export {
  compareSetups,
  SETUP_SECTIONS,
  type SetupComparison,
  type SetupFingerprint,
  type SetupInputs,
  type SetupSection,
  setupFingerprint,
} from "./setup-fingerprint";
export { stableHash, stableStringify } from "./stable-json";
export {
  type CarvedBudget,
  carveChildBudget,
  type SpawnPlace,
  type SubSessionLimits,
  spawnRefusal,
} from "./sub-session-limits";
export {
  CORE_TOOLS,
  type EagerChoice,
  offeredTools,
  offerTools,
  SessionToolSet,
  ToolPlacement,
} from "./tool-offer";
export { searchTools, type ToolSearchMatch } from "./tool-search";
export { validateAgentTools, validateEnvironmentPolicy, validateToolPolicy } from "./validate-policy";
