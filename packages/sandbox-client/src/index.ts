export { allowlistEntryProblems, SYSTEM_PROGRAM_DIRS } from "./allowlist";
export { checkExec, type ExecCheck, type ExecPolicyConfig, type ExecVerdict } from "./exec-policy";
export { SandboxMcpTransport, type StdioLaunch } from "./mcp-stdio-transport";
export { createSandboxClient, type SandboxClient, type SandboxClientOptions } from "./sandbox-client";
export {
  announceSubstrateChange,
  pinnedSandboxService,
  sandboxMcpSubject,
  sandboxService,
  sandboxStatusSubject,
  substrateChangedSubject,
} from "./sandbox-service";
export { analyzeCommand } from "./shell-analysis";
