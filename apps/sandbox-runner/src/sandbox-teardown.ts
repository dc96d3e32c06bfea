import type Docker from "dockerode";
import type { SandboxBrowsers } from "./browser/sandbox-browsers";
import type { KeyedMutex } from "./keyed-mutex";
import { sessionContainerName } from "./labels";
import type { McpStdioServers } from "./mcp-stdio-servers";
import type { RunnerLog } from "./runner-log";
import { removeContainer } from "./sandbox-container";
import type { SandboxNetworks } from "./sandbox-network";
import type { SandboxRegistry } from "./sandbox-registry";
import type { SandboxStatus } from "./sandbox-status";
import type { SessionStore } from "./session-store";
import type { ShellStatePersistence } from "./shell-state";
import type { WorkspaceDisks } from "./workspace-disks";

export type SandboxTeardownDeps = {
  docker: Docker;
  runnerId: string;
  registry: SandboxRegistry;
  status: SandboxStatus;
  store: SessionStore;
  shells: ShellStatePersistence;
  workspaces: WorkspaceDisks;
  networks: SandboxNetworks;
  /** The sessions' lock, shared with ensure: a release or idle stop never overlaps a revival. */
  lock: KeyedMutex;
  /** A sandbox with no call for this long is stopped (its workspace and binding stay). */
  idleStopMs: number;
  /** A session's browser connection goes with its container. */
  browsers: SandboxBrowsers;
  /** The sessions' MCP stdio servers: they die with the container. */
  mcp: McpStdioServers;
  log: RunnerLog;
};

/**
 * Taking sandboxes down: an idle one is stopped (workspace, binding and shell state kept, so the next
 * call starts it again); a released one is removed with everything it had.
 */
export class SandboxTeardown {
  constructor(private readonly deps: SandboxTeardownDeps) {}

  /** Removes the session's sandbox; with `tenantId`, only when that tenant owns it. */
  release(sessionId: string, tenantId?: string): Promise<boolean> {
    const { docker, registry, store, workspaces, networks, status } = this.deps;
    return this.deps.lock.run(sessionId, async () => {
      const sandbox = registry.get(sessionId);
      const binding = sandbox?.binding ?? (await store.loadBinding(sessionId));
      if (binding && tenantId !== undefined) registry.assertOwner(binding, tenantId);
      registry.drop(sessionId);
      if (sandbox) sandbox.status = "closed";
      sandbox?.container?.channel?.close();
      await this.deps.browsers.forget(sessionId);
      await this.deps.mcp.forget(sessionId);
      await removeContainer(docker, sessionContainerName(this.deps.runnerId, sessionId));
      if (binding) {
        await removeContainer(docker, binding.container_id);
        await workspaces.remove(binding.workspace_volume);
        if (binding.network !== null) await networks.remove(binding.network);
      }
      await store.remove(sessionId);
      if (binding) status.notify(binding.tenant_id, sessionId, "closed", []);
      return binding !== null;
    });
  }

  /** Stops sandboxes idle past `idleStopMs`; their next call or ensure starts them again. */
  async stopIdle(now = Date.now()): Promise<void> {
    const { registry, shells, status } = this.deps;
    for (const sandbox of registry.all()) {
      if (sandbox.status !== "ready" || sandbox.inflight > 0) continue;
      if (now - sandbox.lastUsedAt < this.deps.idleStopMs) continue;
      const sessionId = sandbox.binding.session_id;
      await this.deps.lock
        .run(sessionId, async () => {
          if (sandbox.status !== "ready" || sandbox.inflight > 0 || !registry.holds(sessionId)) return;
          await shells.save(sessionId, sandbox.container).catch(() => undefined);
          sandbox.status = "closed";
          await this.deps.browsers.forget(sessionId);
          await this.deps.mcp.forget(sessionId);
          await sandbox.container?.stop();
          status.notify(sandbox.binding.tenant_id, sessionId, "closed", []);
        })
        .catch((error) => this.deps.log.warn({ err: error, sessionId }, "idle stop failed"));
    }
  }
}
