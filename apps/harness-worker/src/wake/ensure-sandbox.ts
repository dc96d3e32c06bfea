import type { SandboxClient } from "@wakeloop/sandbox-client";
import type { Logger } from "@wakeloop/telemetry";
import type { SessionView } from "../session/session-view";
import type { SessionWriter } from "../session/session-writer";

/** Whether the wake must provision the session's sandbox before its first request. */
export function needsSandbox(sandbox: SandboxClient | null, view: SessionView): boolean {
  return sandbox !== null && view.environment !== null && view.state.sandbox_status !== "ready";
}

/**
 * Makes sure a session with an environment has its sandbox before the model is offered sandbox tools
 * (runtime gating reads `sandbox.status`). A warm-pool claim takes milliseconds; a failure is recorded
 * as `sandbox.status: error` and the wake goes on without sandbox tools.
 */
export async function ensureSandbox(
  sandbox: SandboxClient | null,
  view: SessionView,
  writer: SessionWriter,
  log: Logger,
): Promise<void> {
  // The null checks only narrow the types: `needsSandbox` implies them.
  if (!needsSandbox(sandbox, view) || sandbox === null || view.environment === null) return;
  await writer.write({ events: [{ type: "sandbox.status", status: "provisioning" }] });
  try {
    const ensured = await sandbox.ensureSandbox({
      tenantId: view.tenantId,
      sessionId: view.sessionId,
      environment: view.environment.spec.config,
      // The agent's substrate is mounted read-only at /workspace/agent (and brought up to date).
      agentId: view.agentId,
    });
    await writer.write({ events: [{ type: "sandbox.status", status: ensured.status }] });
  } catch (error) {
    log.warn({ err: error }, "sandbox could not be provisioned");
    const message = error instanceof Error ? error.message : String(error);
    await writer.write({ events: [{ type: "sandbox.status", status: "error", message }] });
  }
}
