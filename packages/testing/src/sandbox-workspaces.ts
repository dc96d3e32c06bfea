import { execFile } from "node:child_process";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";

// A sandbox-runner keeps each session's workspace as `<stateDir>/workspaces/<name>.img`, loop-mounted
// on `<stateDir>/workspaces/<name>/` (apps/sandbox-runner/src/workspace-disks.ts). Tests see them here
// without importing the app.

const run = promisify(execFile);

const workspacesDir = (stateDir: string) => join(stateDir, "workspaces");

/** Names of the workspaces a runner with this state directory holds on the host (image or mount point). */
export async function sandboxWorkspaces(stateDir: string): Promise<string[]> {
  const entries = await readdir(workspacesDir(stateDir)).catch(() => [] as string[]);
  return [...new Set(entries.map((entry) => entry.replace(/\.img$/, "")))].sort();
}

/**
 * Unmounts every workspace of a runner's state directory (its loop devices go with them), so the
 * directory can be removed: `rm -r` would descend into a mounted workspace and then fail on it.
 */
export async function unmountSandboxWorkspaces(stateDir: string): Promise<void> {
  for (const name of await sandboxWorkspaces(stateDir)) {
    // "not mounted" for images without a mount and for mount points already let go: nothing to do.
    await run("umount", [join(workspacesDir(stateDir), name)]).catch(() => undefined);
  }
}
