import type { SandboxContainer } from "./sandbox-container";
import type { SessionStore } from "./session-store";

/** How long the agent may take to list or restore its shells' states. */
const SHELL_STATE_TIMEOUT_MS = 5_000;

/**
 * The persistent shells' cwd and exported variables, kept across a stopped container: saved to the
 * session's directory before an idle stop (or the runner's shutdown), restored into the agent of the
 * restarted or re-created container.
 */
export class ShellStatePersistence {
  constructor(private readonly store: SessionStore) {}

  async save(sessionId: string, container: SandboxContainer | null): Promise<void> {
    const channel = container?.channel;
    if (!channel || channel.closed) return;
    const { states } = await channel.call("shell.states", {}, { timeoutMs: SHELL_STATE_TIMEOUT_MS });
    await this.store.saveShellStates(sessionId, states);
  }

  async restore(sessionId: string, container: SandboxContainer | null): Promise<void> {
    const states = await this.store.loadShellStates(sessionId);
    if (Object.keys(states).length === 0) return;
    await container?.channel?.call("shell.restore", { states }, { timeoutMs: SHELL_STATE_TIMEOUT_MS });
  }
}
