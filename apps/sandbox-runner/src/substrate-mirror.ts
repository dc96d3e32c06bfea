import { createHash } from "node:crypto";
import { chmod, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type Database, listSubstrateFiles, type SubstrateLimits, substrateContents } from "@wakeloop/db";
import type { Kysely } from "kysely";
import { z } from "zod";
import { KeyedMutex } from "./keyed-mutex";
import type { RunnerLog } from "./runner-log";

/** An agent's substrate, as the runner's tools and mirror address it. */
export type SubstrateScope = { tenantId: string; agentId: string };

/** What a mirror directory holds: path → version id, kept beside it (never inside, where sandboxes read). */
const Manifest = z.record(z.string(), z.string());
type Manifest = z.infer<typeof Manifest>;

/**
 * The agent substrates of the sessions this runner holds, mirrored from Postgres (the source of truth)
 * into `SANDBOX_STATE_DIR/substrates/<name>/`, which every sandbox of the agent on this runner
 * bind-mounts read-only at /workspace/agent. A sync brings one directory to the agent's latest
 * versions: only files whose version changed are fetched and written (to a temporary file, then
 * renamed, so a sandbox never reads half a file); files no longer listed are removed. It runs at every
 * `ensure` (each wake) and after a promotion or restore through this runner, one at a time per agent.
 * The state directory is shared with dockerd at the same path (like the workspaces), so a bind mount
 * of it works from a runner in a container too. Paths are ResourcePath-checked before they are stored,
 * so each stays inside its directory.
 */
export class SubstrateMirror {
  private readonly lock = new KeyedMutex();

  constructor(
    readonly db: Kysely<Database>,
    readonly limits: SubstrateLimits,
    private readonly stateDir: string,
    private readonly log: RunnerLog,
    /** Tells the other runners (a substrate notice on the bus) after a write through this one. */
    private readonly announce: (scope: SubstrateScope) => void,
  ) {}

  /** The mirror's name for an agent: fixed length, safe in paths, the same on every runner. */
  static nameOf(scope: SubstrateScope): string {
    return `wl-substrate-${createHash("sha256").update(`${scope.tenantId}/${scope.agentId}`).digest("hex").slice(0, 24)}`;
  }

  /** The host directory mounted at /workspace/agent. */
  dir(name: string): string {
    return join(this.stateDir, "substrates", name);
  }

  /** After a write through this runner: this mirror at once, the other runners through the notice. */
  async changed(scope: SubstrateScope): Promise<void> {
    await this.sync(scope);
    this.announce(scope);
  }

  /**
   * Brings the agent's mirror to its latest versions; returns its name. Only a directory that cannot be
   * made fails it (a container cannot mount it); a failed read of Postgres or write of a file leaves the
   * mirror as it was (each file is whole, of some version) until the next sync, and is logged, so a
   * database hiccup never takes a ready sandbox down.
   */
  sync(scope: SubstrateScope): Promise<string> {
    const name = SubstrateMirror.nameOf(scope);
    return this.lock.run(name, async () => {
      const dir = this.dir(name);
      await mkdir(dir, { recursive: true, mode: 0o755 });
      // mkdir's mode is masked by the umask; sandboxes (uid 1000) must be able to list the mirror.
      await chmod(dir, 0o755);
      try {
        await this.update(scope, name, dir);
      } catch (error) {
        this.log.warn(
          { err: error, substrate: name },
          "substrate mirror left as it was; the next sync retries",
        );
      }
      return name;
    });
  }

  private async update(scope: SubstrateScope, name: string, dir: string): Promise<void> {
    const staging = join(this.stateDir, "substrates", ".staging");
    await mkdir(staging, { recursive: true, mode: 0o700 });
    const manifestPath = `${dir}.json`;
    const held = await readManifest(manifestPath);
    const files = await listSubstrateFiles(this.db, scope);
    const changed = files.filter((file) => held[file.path] !== file.version_id);
    const contents = await substrateContents(
      this.db,
      scope,
      changed.map((file) => file.version_id),
    );
    const next: Manifest = Object.fromEntries(files.map((file) => [file.path, file.version_id]));
    for (const version of contents) {
      const target = join(dir, version.path);
      const temporary = join(staging, `${name}-${version.id}`);
      await writeFile(temporary, version.content, { mode: 0o644 });
      await chmod(temporary, 0o644);
      await mkdirReadable(dir, dirname(version.path));
      await rename(temporary, target);
    }
    for (const path of Object.keys(held)) {
      if (!(path in next)) await rm(join(dir, path), { force: true });
    }
    if (changed.length > 0 || Object.keys(held).length !== files.length) {
      await writeFile(`${manifestPath}.tmp`, JSON.stringify(next));
      await rename(`${manifestPath}.tmp`, manifestPath);
      this.log.info({ substrate: name, files: files.length, written: contents.length }, "substrate synced");
    }
  }
}

async function readManifest(path: string): Promise<Manifest> {
  try {
    return Manifest.parse(JSON.parse(await readFile(path, "utf8")));
  } catch {
    // Missing (first sync) or unreadable: every file is written again, which is always correct.
    return {};
  }
}

/** Creates each parent directory of a file, readable by the sandbox user. */
async function mkdirReadable(root: string, relative: string): Promise<void> {
  if (relative === "." || relative === "") return;
  let current = root;
  for (const segment of relative.split("/")) {
    current = join(current, segment);
    await mkdir(current, { recursive: true, mode: 0o755 });
    await chmod(current, 0o755);
  }
}
