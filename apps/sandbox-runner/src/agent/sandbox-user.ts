// The agent starts as the container's root with only CAP_SETUID and CAP_SETGID, and at once takes the
// sandbox user (1000) as its effective uid and gid: every file it touches and every check it makes is
// that user's, but its real and saved uid stay 0. So processes of the sandbox user can neither signal
// it (kill needs a matching real or saved uid) nor open its stdio or memory under /proc (the kernel
// wants all of its uids to match, and it is no longer dumpable): the runner's channel is the agent's
// alone. Commands are started with every uid set to 1000, so none of them can take uid 0 back.
import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";

export const SANDBOX_UID = 1000;
export const SANDBOX_GID = 1000;

/** Called once, before anything else runs; a no-op in an agent already started as the sandbox user. */
export function becomeSandboxUser(): void {
  if (process.getuid?.() !== 0) return;
  process.setgroups?.([]);
  process.setegid?.(SANDBOX_GID);
  process.seteuid?.(SANDBOX_UID);
}

/**
 * `child_process.spawn` as the sandbox user. The fork needs effective uid 0 for a moment so the child
 * may set all of its ids (an unprivileged setuid would only change the effective one); spawn returns
 * after the child has exec'd, so the agent is back to uid 1000 before any other code runs.
 */
export function spawnAsSandboxUser(command: string, args: string[], options: SpawnOptions): ChildProcess {
  if (process.getuid?.() !== 0) return spawn(command, args, options);
  process.seteuid?.(0);
  try {
    return spawn(command, args, { ...options, uid: SANDBOX_UID, gid: SANDBOX_GID });
  } finally {
    process.seteuid?.(SANDBOX_UID);
  }
}
