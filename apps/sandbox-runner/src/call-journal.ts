import { createHash } from "node:crypto";
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  SandboxExecuteCompleted as CompletedSchema,
  type SandboxExecuteCompleted,
  WakeloopError,
} from "@wakeloop/contracts";
import { writeFileAtomic } from "./session-store";

/**
 * Idempotency of tool calls (DESIGN invariant 7). Each call id gets a `started` marker before it
 * runs and its result file after; both live in the runner's state directory on the host, beside the
 * containers, so they survive a runner restart and disappear with the session on release. A call id
 * seen again returns the recorded result; one that started but never recorded a result (the runner
 * died mid-call) is reported as `tool_call_outcome_unknown` so the harness applies its own rule
 * (re-run only idempotent tools) instead of the runner silently repeating a side effect.
 *
 * Records are written with write+rename but not fsync: they must survive a process crash, which is
 * what a runner restart is; surviving power loss would cost a disk flush on every warm command.
 */
export class CallJournal {
  private readonly inflight = new Map<string, Promise<SandboxExecuteCompleted | null>>();

  constructor(private readonly sessionDir: (sessionId: string) => string) {}

  private paths(sessionId: string, callId: string) {
    const dir = join(this.sessionDir(sessionId), "calls");
    const name = createHash("sha256").update(callId).digest("hex").slice(0, 32);
    return { dir, result: join(dir, `${name}.json`), started: join(dir, `${name}.started`) };
  }

  /**
   * Runs `execute` once per call id. `execute` returns null when nothing ran (e.g. the call needs an
   * approval first); then no record is kept and the same id may come back later.
   */
  async once<T extends SandboxExecuteCompleted | null>(
    sessionId: string,
    callId: string,
    execute: () => Promise<T>,
  ): Promise<SandboxExecuteCompleted | T> {
    const key = `${sessionId}\u0000${callId}`;
    const running = this.inflight.get(key);
    if (running) {
      const first = await running;
      return first === null ? this.once(sessionId, callId, execute) : { ...first, replayed: true };
    }
    // Registered before the first await, so a duplicate arriving meanwhile waits for this run.
    const task = this.run(sessionId, callId, execute);
    this.inflight.set(key, task);
    try {
      return await task;
    } finally {
      if (this.inflight.get(key) === task) this.inflight.delete(key);
    }
  }

  private async run<T extends SandboxExecuteCompleted | null>(
    sessionId: string,
    callId: string,
    execute: () => Promise<T>,
  ): Promise<SandboxExecuteCompleted | T> {
    const paths = this.paths(sessionId, callId);
    const recorded = await this.recorded(paths.result);
    if (recorded) return { ...recorded, replayed: true };
    if (await exists(paths.started)) {
      throw new WakeloopError(
        "tool_call_outcome_unknown",
        `tool call ${callId} started before the sandbox runner restarted and its outcome was not recorded`,
        { retryable: false },
      );
    }
    await mkdir(paths.dir, { recursive: true });
    await writeFile(paths.started, "");
    try {
      const result = await execute();
      if (result !== null) await writeFileAtomic(paths.result, JSON.stringify(result));
      await rm(paths.started, { force: true });
      return result;
    } catch (error) {
      // Retryable failures happened before the command could run (no container, agent timeout on
      // connect); a channel that closed mid-call keeps the marker, because the effect may have happened.
      if (error instanceof WakeloopError && error.retryable && error.code !== "sandbox_channel_closed") {
        await rm(paths.started, { force: true });
      }
      throw error;
    }
  }

  private async recorded(path: string): Promise<SandboxExecuteCompleted | null> {
    try {
      return CompletedSchema.parse(JSON.parse(await readFile(path, "utf8")));
    } catch {
      return null;
    }
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
