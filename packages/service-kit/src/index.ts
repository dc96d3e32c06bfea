export { MemoryLimitsEnv, memoryLimits } from "./memory-limits-env";
export { type ConfigCheck, checkConfig, type Env, parseConfig } from "./parse-config";
export { hostList, type ProviderSettings, ProviderSettingsEnv } from "./provider-settings-env";
export { type RunServiceOptions, runService } from "./run-service";
export {
  assertSandboxLimits,
  type SandboxLimits,
  type SandboxLimitsConfig,
  SandboxLimitsEnv,
  type SandboxLimitViolation,
  sandboxLimits,
  sandboxLimitViolations,
} from "./sandbox-limits";
export {
  envCount,
  natsCredentials,
  portNumber,
  type ServiceConfig,
  ServiceEnv,
  serviceEnv,
} from "./service-env";
export type { ServiceContext, Stoppable } from "./stoppable";
export { SubstrateLimitsEnv, substrateLimits } from "./substrate-limits-env";
export { jsonEnv, ToolSettingsEnv } from "./tool-settings-env";
export { WakeLimitsEnv } from "./wake-limits-env";
