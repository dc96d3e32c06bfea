import { type SandboxDescribeResponse, type SandboxStatusValue, WakeloopError } from "@wakeloop/contracts";
import type { RunnerLog } from "./runner-log";
import type { SandboxContainer } from "./sandbox-container";
import type { Binding } from "./session-store";

/** A session's sandbox as this runner holds it: the binding on disk plus what lives in memory. */
export type HeldSandbox = {
  binding: Binding;
  container: SandboxContainer | null;
  status: SandboxStatusValue;
  lastUsedAt: number;
  inflight: number;
};

/**
 * The sandboxes this runner holds, by session, and who owns each: a request from another tenant is
 * refused (and logged) before anything runs.
 */
export class SandboxRegistry {
  private readonly sandboxes = new Map<string, HeldSandbox>();

  constructor(
    readonly runnerId: string,
    private readonly log: RunnerLog,
  ) {}

  get(sessionId: string): HeldSandbox | undefined {
    return this.sandboxes.get(sessionId);
  }

  holds(sessionId: string): boolean {
    return this.sandboxes.has(sessionId);
  }

  /** Starts holding `binding`'s sandbox (a new one, or one adopted at start-up). */
  hold(binding: Binding, container: SandboxContainer | null, status: SandboxStatusValue): HeldSandbox {
    const sandbox: HeldSandbox = { binding, container, status, lastUsedAt: Date.now(), inflight: 0 };
    this.sandboxes.set(binding.session_id, sandbox);
    return sandbox;
  }

  drop(sessionId: string): void {
    this.sandboxes.delete(sessionId);
  }

  all(): HeldSandbox[] {
    return [...this.sandboxes.values()];
  }

  /** Sandboxes held for the tenant (running or idle-stopped, until released): what its quota counts. */
  countOf(tenantId: string): number {
    let held = 0;
    for (const sandbox of this.sandboxes.values()) if (sandbox.binding.tenant_id === tenantId) held += 1;
    return held;
  }

  /** The session's sandbox, refused unless `tenantId` owns it (the same answer as no sandbox at all). */
  held(sessionId: string, tenantId: string): HeldSandbox {
    const sandbox = this.sandboxes.get(sessionId);
    if (!sandbox) {
      throw new WakeloopError(
        "sandbox_not_found",
        `runner ${this.runnerId} holds no sandbox for session ${sessionId}; call ensure first`,
      );
    }
    this.assertOwner(sandbox.binding, tenantId);
    return sandbox;
  }

  assertOwner(binding: Binding, tenantId: string): void {
    if (binding.tenant_id === tenantId) return;
    this.log.warn(
      { sessionId: binding.session_id, tenantId },
      "refused a sandbox request from a tenant that does not own the session",
    );
    throw new WakeloopError(
      "sandbox_tenant_mismatch",
      `session ${binding.session_id} has no sandbox for tenant ${tenantId}`,
    );
  }

  describe(sessionId: string): SandboxDescribeResponse {
    const sandbox = this.sandboxes.get(sessionId);
    return {
      session_id: sessionId,
      runner_id: this.runnerId,
      status: sandbox?.status ?? "absent",
      container_id: sandbox?.container?.id ?? null,
      environment: sandbox?.binding.environment ?? null,
    };
  }
}
