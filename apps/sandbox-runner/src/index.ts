export { type ApprovalCheck, hasCommittedAllow, postgresApprovals } from "./committed-allow";
export { type SandboxRunner, type SandboxServiceOptions, startSandboxService } from "./sandbox-service";
