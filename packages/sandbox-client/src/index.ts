export { allowlistSatisfied, SYSTEM_PROGRAM_DIRS } from "./allowlist";
export {
  checkExec,
  type ExecCheck,
  type ExecPolicyConfig,
  type ExecVerdict,
  evaluateExecPolicy,
  evaluateExecRequest,
} from "./exec-policy";
export { type ExecRequest, execRequestOf } from "./exec-request";
export { createSandboxClient, type SandboxClient, type SandboxClientOptions } from "./sandbox-client";
export { pinnedSandboxService, sandboxService, sandboxStatusSubject } from "./sandbox-service";
export { isSensitiveEnvName } from "./sensitive-env";
export { analyzeCommand, type ShellAnalysis, type SimpleCommand } from "./shell-analysis";
