export { commandOf } from "./command-of";
export {
  allowlistSatisfied,
  analyzeCommand,
  type ExecPolicyConfig,
  type ExecVerdict,
  evaluateExecPolicy,
  explainExecVerdict,
} from "./exec-policy";
export { createSandboxClient, type SandboxClient, type SandboxClientOptions } from "./sandbox-client";
export { pinnedSandboxService, sandboxService, sandboxStatusSubject } from "./sandbox-service";
