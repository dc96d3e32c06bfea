// Path safety inside the container: every path a file action touches must resolve, after following
// symlinks, inside the mounted roots. The container is the security boundary; this keeps the tools'
// contract ("you work in /workspace") exact and gives the model a clear error instead of a surprise.
import fs from "node:fs";
import path from "node:path";
import { AgentError } from "./errors";

type AgentConfig = { workspace?: string; readOnlyRoots?: string[]; workspaceAccess?: "rw" | "ro" };

const config = JSON.parse(process.env.WL_AGENT_CONFIG || "{}") as AgentConfig;
export const WORKSPACE = config.workspace || "/workspace";
export const READ_ONLY_ROOTS = config.readOnlyRoots || [];
export const WORKSPACE_WRITABLE = config.workspaceAccess !== "ro";

export type Resolved = { path: string; stat: fs.Stats | null };
/** A path that must exist ("read" mode): its stat is known. */
export type ResolvedExisting = { path: string; stat: fs.Stats };

export function within(child: string, root: string): boolean {
  return child === root || child.startsWith(`${root}/`);
}

function lexical(input: unknown, cwd: string | undefined): string {
  if (typeof input !== "string" || input.length === 0) {
    throw new AgentError("invalid_path", "path must be a non-empty string");
  }
  if (input.includes("\0")) throw new AgentError("invalid_path", "path contains a NUL byte");
  const absolute = path.resolve(cwd || WORKSPACE, input);
  if (!within(absolute, WORKSPACE)) {
    throw new AgentError(
      "path_outside_workspace",
      `${input} resolves to ${absolute}, outside ${WORKSPACE}; use a path inside ${WORKSPACE}`,
    );
  }
  return absolute;
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}

/** realpath of the longest existing prefix, with the missing tail appended. */
function realpathAllowMissing(absolute: string): string {
  let existing = absolute;
  const missing: string[] = [];
  for (;;) {
    try {
      return path.join(fs.realpathSync(existing), ...missing.reverse());
    } catch (error) {
      if (errorCode(error) !== "ENOENT" && errorCode(error) !== "ENOTDIR") throw error;
      const parent = path.dirname(existing);
      if (parent === existing) throw error;
      missing.push(path.basename(existing));
      existing = parent;
    }
  }
}

export function isReadOnly(real: string): boolean {
  return !WORKSPACE_WRITABLE || READ_ONLY_ROOTS.some((root) => within(real, root));
}

type ResolveOptions = { cwd?: string | undefined; mode?: "read" | "write" | "any" };

/**
 * Resolves `input` (relative to `cwd`, default /workspace) for an action.
 * mode "read": must exist; "write": may be missing, must be writable; "any": may be missing.
 * Returns the real absolute path and its stat (null when missing).
 */
export function resolvePath(
  input: unknown,
  options?: { cwd?: string | undefined; mode?: "read" },
): ResolvedExisting;
export function resolvePath(input: unknown, options: ResolveOptions): Resolved;
export function resolvePath(input: unknown, { cwd, mode = "read" }: ResolveOptions = {}): Resolved {
  const absolute = lexical(input, cwd);
  const real = realpathAllowMissing(absolute);
  if (!within(real, WORKSPACE)) {
    throw new AgentError(
      "path_symlink_escape",
      `${input} goes through a symlink to ${real}, outside ${WORKSPACE}; refusing to follow it`,
    );
  }
  let stat: fs.Stats | null = null;
  try {
    stat = fs.statSync(real);
  } catch (error) {
    if (errorCode(error) !== "ENOENT") throw error;
  }
  if (stat === null && mode === "read") {
    throw new AgentError("path_not_found", `${input} does not exist`);
  }
  if (stat !== null) {
    if (stat.isCharacterDevice() || stat.isBlockDevice() || stat.isFIFO() || stat.isSocket()) {
      throw new AgentError("path_is_device", `${input} is a device, pipe or socket, not a file or directory`);
    }
    // A second name for a file can point at data outside any root the checks above can see.
    if (stat.isFile() && stat.nlink > 1) {
      throw new AgentError(
        "path_hardlink_escape",
        `${input} is a hard link (link count ${stat.nlink}); hard-linked files are refused`,
      );
    }
  }
  if (mode === "write" && isReadOnly(real)) {
    throw new AgentError(
      "path_read_only",
      `${input} is on a read-only mount (${real}); write under ${WORKSPACE}`,
    );
  }
  return { path: real, stat };
}

/** Opens a checked file and verifies the opened inode is the one that was checked (no swap in between). */
export function openChecked(resolved: Resolved, flags: number): number {
  const fd = fs.openSync(resolved.path, flags | fs.constants.O_NOFOLLOW);
  if (resolved.stat !== null) {
    const opened = fs.fstatSync(fd);
    if (opened.ino !== resolved.stat.ino || opened.dev !== resolved.stat.dev) {
      fs.closeSync(fd);
      throw new AgentError("path_changed", "the file changed while it was being opened; retry");
    }
  }
  return fd;
}
