import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { AgentShellState, EnvironmentConfig, Id } from "@wakeloop/contracts";
import { z } from "zod";
import { sessionKey } from "./labels";

// The runner's own durable records, on the host next to the containers they describe: which
// container and volume belong to which session (labels cannot change after a warm container is
// claimed), the shell state to restore after an idle stop, and the idempotency journal.

export const Binding = z.object({
  tenant_id: Id,
  session_id: Id,
  agent_id: Id.nullable(),
  environment: EnvironmentConfig,
  container_id: z.string(),
  /**
   * The session's workspace (WorkspaceDisks: `workspaces/<name>.img` under the state directory). The
   * key is the one from when workspaces were Docker volumes, so existing binding files still parse.
   */
  workspace_volume: z.string(),
  /** The agent substrate mirror (SubstrateMirror name); the key is from when it was a Docker volume. */
  substrate_volume: z.string().nullable(),
  /** The sandbox's own fenced network (removed on release); absent in bindings written before it existed. */
  network: z.string().nullable().default(null),
});
export type Binding = z.infer<typeof Binding>;

export const ShellStates = z.record(z.string(), AgentShellState);
export type ShellStates = z.infer<typeof ShellStates>;

/** Writes through a temporary file and a rename, so a crash leaves the old or the new file, never half. */
export async function writeFileAtomic(path: string, content: string): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, content);
  await rename(temporary, path);
}

async function readJson<T>(path: string, schema: z.ZodType<T>): Promise<T | null> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  const parsed = schema.safeParse(JSON.parse(text));
  return parsed.success ? parsed.data : null;
}

export class SessionStore {
  constructor(private readonly stateDir: string) {}

  dir(sessionId: string): string {
    return join(this.stateDir, "sessions", sessionKey(sessionId));
  }

  async saveBinding(binding: Binding): Promise<void> {
    await mkdir(this.dir(binding.session_id), { recursive: true });
    await writeFileAtomic(join(this.dir(binding.session_id), "binding.json"), JSON.stringify(binding));
  }

  loadBinding(sessionId: string): Promise<Binding | null> {
    return readJson(join(this.dir(sessionId), "binding.json"), Binding);
  }

  async allBindings(): Promise<Binding[]> {
    let keys: string[];
    try {
      keys = await readdir(join(this.stateDir, "sessions"));
    } catch {
      return [];
    }
    const bindings = await Promise.all(
      keys.map((key) => readJson(join(this.stateDir, "sessions", key, "binding.json"), Binding)),
    );
    return bindings.filter((binding): binding is Binding => binding !== null);
  }

  async saveShellStates(sessionId: string, states: ShellStates): Promise<void> {
    await mkdir(this.dir(sessionId), { recursive: true });
    await writeFileAtomic(join(this.dir(sessionId), "shells.json"), JSON.stringify(states));
  }

  async loadShellStates(sessionId: string): Promise<ShellStates> {
    return (await readJson(join(this.dir(sessionId), "shells.json"), ShellStates)) ?? {};
  }

  /** Forgets the session entirely (its sandbox was released). */
  async remove(sessionId: string): Promise<void> {
    await rm(this.dir(sessionId), { recursive: true, force: true });
  }
}
