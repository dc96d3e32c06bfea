import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, open, readdir, readFile, rm, rmdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { WakeloopError } from "@wakeloop/contracts";
import type { RunnerLog } from "./runner-log";

const run = promisify(execFile);

/** The sandbox user (uid/gid 1000) owns the root of every workspace filesystem. */
const SANDBOX_OWNER = "1000:1000";
const COMMAND_TIMEOUT_MS = 60_000;

/** Mount points in /proc/self/mountinfo escape space, tab, newline and backslash as octal. */
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** Every mount point of this mount namespace (the one dockerd binds from). */
export async function mountPoints(): Promise<Set<string>> {
  const text = await readFile("/proc/self/mountinfo", "utf8");
  return new Set(
    text
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => unescapeMountPath(line.split(" ")[4] ?? "")),
  );
}

/** Backing files of the loop devices in use (for tests and checks: none may outlive its workspace). */
export async function loopBackingFiles(): Promise<string[]> {
  const devices = await readdir("/sys/block").catch(() => [] as string[]);
  const files: string[] = [];
  for (const device of devices.filter((name) => name.startsWith("loop"))) {
    const file = await readFile(join("/sys/block", device, "loop", "backing_file"), "utf8").catch(() => "");
    if (file.trim() !== "") files.push(file.trim().replace(/ \(deleted\)$/, ""));
  }
  return files;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/**
 * Each session's `/workspace` is its own ext4 filesystem of `workspace_mb`, in a sparse image file
 * under the runner's state directory, loop-mounted on the host and bind-mounted into the container.
 * Docker's `local` volumes have no size option on overlay2/ext4 (no project quotas, and its `o=loop`
 * fails because dockerd's mount(2) sets up no loop device), so the runner makes the filesystem itself:
 * a write past the size fails with ENOSPC inside that session only, and the host's disk is safe.
 *
 * `workspaces/<name>.img` is the data and survives idle stops, runner restarts and host reboots;
 * `workspaces/<name>/` is where it is mounted (kept mode 000 and root-owned, so a container started
 * over a missing mount can write nothing to the host's disk). Mounted with `loop` (util-linux sets
 * autoclear, so the unmount frees the loop device), `nosuid`, `nodev`.
 */
export class WorkspaceDisks {
  readonly dir: string;

  constructor(
    stateDir: string,
    private readonly log: RunnerLog,
  ) {
    this.dir = join(stateDir, "workspaces");
  }

  /** Start-up: the tools are there and loop devices can be had (root, /dev/loop-control), or exit. */
  async check(): Promise<void> {
    await this.command("mkfs.ext4", ["-V"]);
    await this.command("losetup", ["--find"]);
  }

  /** A fresh name (Docker-name safe). */
  static newName(): string {
    return `wl-ws-${randomBytes(8).toString("hex")}`;
  }

  image(name: string): string {
    return join(this.dir, `${name}.img`);
  }

  mountPath(name: string): string {
    return join(this.dir, name);
  }

  exists(name: string): Promise<boolean> {
    return exists(this.image(name));
  }

  /** Makes an empty workspace of `sizeMb` and mounts it; cleans up after itself on failure. */
  async create(name: string, sizeMb: number): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const image = this.image(name);
    try {
      const file = await open(image, "wx", 0o600);
      try {
        await file.truncate(sizeMb * 1024 * 1024); // sparse: the host's disk holds only what is written
      } finally {
        await file.close();
      }
      // -m 0: no blocks reserved for root, the sandbox user gets all of workspace_mb.
      await this.command("mkfs.ext4", ["-q", "-F", "-m", "0", "-E", `root_owner=${SANDBOX_OWNER}`, image]);
      await this.mount(name);
      // The workspace starts empty, as the tools and the model expect; fsck recreates it when needed.
      await rmdir(join(this.mountPath(name), "lost+found")).catch(() => undefined);
    } catch (error) {
      await this.remove(name).catch(() => undefined);
      throw error;
    }
  }

  /** Mounts the workspace when it is not mounted (idempotent: after a reboot only the image is left). */
  async mount(name: string): Promise<void> {
    const target = this.mountPath(name);
    if ((await mountPoints()).has(target)) return;
    if (!(await this.exists(name))) {
      throw new WakeloopError("sandbox_workspace_missing", `the workspace image of ${name} is gone`);
    }
    await mkdir(target, { recursive: true, mode: 0o000 });
    await this.command("mount", ["-o", "loop,nosuid,nodev", this.image(name), target]);
  }

  /** Unmounts (its loop device goes with it), deletes the image and the mount point; idempotent. */
  async remove(name: string): Promise<void> {
    const target = this.mountPath(name);
    if ((await mountPoints()).has(target)) {
      await this.command("umount", [target]).catch(async (error) => {
        // Busy (a process on the host inside it): detach now, the kernel frees it when it is let go.
        this.log.warn({ err: error, workspace: name }, "workspace busy; unmounting lazily");
        await this.command("umount", ["-l", target]);
      });
    }
    await rm(this.image(name), { force: true });
    await rmdir(target).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error;
    });
  }

  /** The workspaces on this host: images, mount points and mounts under `dir`. */
  async list(): Promise<string[]> {
    const entries = await readdir(this.dir).catch(() => [] as string[]);
    const names = new Set(entries.map((entry) => entry.replace(/\.img$/, "")));
    for (const point of await mountPoints()) {
      if (point.startsWith(`${this.dir}/`)) names.add(point.slice(this.dir.length + 1));
    }
    return [...names].sort();
  }

  /**
   * Start-up: the workspaces in `keep` are mounted (after a host reboot only their images are left);
   * every other one (warm pool workspaces, orphans of a crash mid-provisioning) is removed.
   */
  async reconcile(keep: ReadonlySet<string>): Promise<void> {
    for (const name of await this.list()) {
      if (!keep.has(name)) {
        this.log.info({ workspace: name }, "removing unclaimed workspace");
        await this.remove(name).catch((error) =>
          this.log.warn({ err: error, workspace: name }, "could not remove an unclaimed workspace"),
        );
      } else if (await this.exists(name)) {
        await this.mount(name).catch((error) =>
          this.log.warn({ err: error, workspace: name }, "could not mount a kept workspace"),
        );
      }
    }
  }

  private async command(program: string, args: string[]): Promise<void> {
    try {
      await run(program, args, { timeout: COMMAND_TIMEOUT_MS });
    } catch (error) {
      const e = error as { code?: string; stderr?: string; message: string };
      const hint =
        e.code === "ENOENT"
          ? ` (${program} is missing: install e2fsprogs and util-linux on the runner's host)`
          : "";
      throw new WakeloopError(
        "sandbox_workspace_failed",
        `${program} ${args.join(" ")} failed: ${(e.stderr ?? "").trim() || e.message}${hint}`,
        { cause: error, retryable: true },
      );
    }
  }
}
