export { allowlistEntryProblems, SYSTEM_PROGRAM_DIRS } from "./allowlist";
export { checkExec, type ExecCheck, type ExecPolicyConfig, type ExecVerdict } from "./exec-policy";
export { createSandboxClient, type SandboxClient, type SandboxClientOptions } from "./sandbox-client";
export {
  announceSubstrateChange,
  pinnedSandboxService,
  sandboxService,
  sandboxStatusSubject,
  substrateChangedSubject,
} from "./sandbox-service";
export { analyzeCommand } from "./shell-analysis";
