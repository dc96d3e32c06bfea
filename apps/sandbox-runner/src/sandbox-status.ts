import type { SandboxStatusNotice, SandboxStatusValue, WakeloopError } from "@wakeloop/contracts";
import type { AgentChannel } from "./agent-channel";
import type { HeldSandbox } from "./sandbox-registry";

/**
 * Status changes of the runner's sandboxes: each is pushed to the `transitions` of the call that
 * caused it (ensure returns them) and published as a notice; a channel that dies under a ready
 * sandbox turns it to `error` on its own.
 */
export class SandboxStatus {
  /** Set when the runner stops: channels closing from then on are its doing, not a sandbox failure. */
  private stopping = false;

  constructor(
    private readonly runnerId: string,
    private readonly onStatus: ((notice: SandboxStatusNotice) => void) | undefined,
  ) {}

  notify(
    tenantId: string,
    sessionId: string,
    status: SandboxStatusValue,
    transitions: SandboxStatusValue[],
    error?: WakeloopError,
  ): void {
    transitions.push(status);
    this.onStatus?.({
      tenant_id: tenantId,
      session_id: sessionId,
      runner_id: this.runnerId,
      status,
      at: new Date().toISOString(),
      ...(error ? { error: { code: error.code, message: error.message } } : {}),
    });
  }

  /** A channel that dies under a ready sandbox (agent or container killed) turns it to `error`. */
  watch(sandbox: HeldSandbox, channel: AgentChannel): void {
    channel.onClose((error) => {
      if (this.stopping || sandbox.container?.channel !== channel || sandbox.status !== "ready") return;
      sandbox.status = "error";
      this.notify(sandbox.binding.tenant_id, sandbox.binding.session_id, "error", [], error);
    });
  }

  stop(): void {
    this.stopping = true;
  }
}
