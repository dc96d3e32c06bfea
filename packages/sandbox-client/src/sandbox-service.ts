import { type Bus, defineService } from "@wakeloop/bus";
import {
  SandboxCancelRequest,
  SandboxCancelResponse,
  SandboxDescribeRequest,
  SandboxDescribeResponse,
  SandboxEnsureRequest,
  SandboxEnsureResponse,
  SandboxExecuteRequest,
  SandboxExecuteResponse,
  SandboxMcpCloseRequest,
  SandboxMcpCloseResponse,
  SandboxMcpOpenRequest,
  SandboxMcpOpenResponse,
  SandboxMcpSendRequest,
  SandboxMcpSendResponse,
  SandboxReleaseRequest,
  SandboxReleaseResponse,
  type SubstrateChangedNotice,
} from "@wakeloop/contracts";

const actions = {
  ensure: { request: SandboxEnsureRequest, response: SandboxEnsureResponse },
  execute: { request: SandboxExecuteRequest, response: SandboxExecuteResponse },
  cancel: { request: SandboxCancelRequest, response: SandboxCancelResponse },
  release: { request: SandboxReleaseRequest, response: SandboxReleaseResponse },
  describe: { request: SandboxDescribeRequest, response: SandboxDescribeResponse },
  mcp_open: { request: SandboxMcpOpenRequest, response: SandboxMcpOpenResponse },
  mcp_send: { request: SandboxMcpSendRequest, response: SandboxMcpSendResponse },
  mcp_close: { request: SandboxMcpCloseRequest, response: SandboxMcpCloseResponse },
};

/**
 * The `sandbox` service every runner serves in one queue group (`<p>.svc.sandbox.<action>`): a new
 * session's `ensure` goes to whichever runner takes it.
 */
export const sandboxService = defineService("sandbox", actions);

/**
 * The same actions on one runner only (`<p>.svc.sandbox-<runnerId>.<action>`): a session's sandbox
 * lives in that runner's container, so once `ensure` named the runner every call goes there. (Bus
 * subjects take one token per service name, hence `sandbox-<id>` rather than `sandbox.runner.<id>`.)
 */
export function pinnedSandboxService(runnerId: string) {
  return defineService(`sandbox-${runnerId}`, actions);
}

/** Core-NATS subject of sandbox status notices (`SandboxStatusNotice`). */
export function sandboxStatusSubject(prefix: string, sessionId: string): string {
  return `${prefix}.sandbox.status.${sessionId}`;
}

/**
 * Core-NATS subject of one MCP stdio attachment's `SandboxMcpFrame`s: what the server process in the
 * sandbox wrote, published by the runner holding it to the worker that opened the attachment.
 */
export function sandboxMcpSubject(prefix: string, attachment: string): string {
  return `${prefix}.sandbox.mcp.${attachment}`;
}

/**
 * Core-NATS subject of `SubstrateChangedNotice`: an agent's substrate got a new version (a promotion
 * or a restore), so every runner holding a sandbox of that agent syncs its mirror of /workspace/agent.
 */
export function substrateChangedSubject(prefix: string): string {
  return `${prefix}.sandbox.substrate`;
}

/**
 * Tells the runners an agent's substrate changed. Best effort, like status notices: a runner that
 * misses it still syncs at its next `ensure` of a session of that agent.
 */
export function announceSubstrateChange(
  bus: Pick<Bus, "nc" | "subjects">,
  scope: { tenantId: string; agentId: string },
): void {
  const notice: SubstrateChangedNotice = { tenant_id: scope.tenantId, agent_id: scope.agentId };
  bus.nc.publish(substrateChangedSubject(bus.subjects.prefix), JSON.stringify(notice));
}
