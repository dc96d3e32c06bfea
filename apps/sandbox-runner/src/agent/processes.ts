// One-shot commands (argv, no shell) and background processes. Each runs in its own process group
// (detached) so a timeout, an interrupt or a `process` signal reaches everything it started.
import type { ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import type {
  AgentLimitDelta,
  AgentPollArgs,
  AgentProcessPage,
  AgentProcessResult,
  AgentProcessSummary,
  AgentProcessWriteArgs,
  AgentRunArgs,
  AgentSignalArgs,
} from "@wakeloop/contracts";
import * as cgroup from "./cgroup";
import { AgentError } from "./errors";
import * as history from "./history";
import { OutputBuffer } from "./output-buffer";
import { killTree, preferForOomKill } from "./process-tree";
import { spawnAsSandboxUser } from "./sandbox-user";

const KEEP_FINISHED = 50;
/** After the leader exits, how long to wait for its pipes to drain before reporting. */
const EXIT_GRACE_MS = 150;

type ProcessRecord = {
  processId: string;
  callId: string | undefined;
  command: string;
  child: ChildProcess;
  entry: history.HistoryEntry | null;
  output: OutputBuffer;
  status: AgentProcessSummary["status"];
  background: boolean;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  cancelled: boolean;
  startedAt: string;
  startedAtMs: number;
  endedAtMs: number | null;
  stdinOpen: boolean;
  limitsBefore: cgroup.LimitSnapshot;
  limits: AgentLimitDelta;
  waiters: Array<() => void>;
};

/** What `cmd.run` gets once the agent chose the command's cwd and environment. */
export type StartArgs = Omit<AgentRunArgs, "cwd" | "env" | "shellEnv"> & {
  cwd: string;
  env: NodeJS.ProcessEnv;
};

/** process id → record */
const processes = new Map<string, ProcessRecord>();
/** tool call id → running record, for interrupts */
const byCall = new Map<string, ProcessRecord>();

function summary(record: ProcessRecord): AgentProcessSummary {
  return {
    processId: record.processId,
    commandId: record.entry?.commandId ?? null,
    command: record.command,
    status: record.status,
    background: record.background,
    exitCode: record.exitCode,
    signal: record.signal,
    timedOut: record.timedOut,
    cancelled: record.cancelled,
    startedAt: record.startedAt,
    durationMs: (record.endedAtMs ?? Date.now()) - record.startedAtMs,
    outputChars: record.output.total,
    stdinOpen: record.stdinOpen,
    limits: record.limits,
  };
}

function pruneFinished(): void {
  const finished = [...processes.values()].filter((r) => r.status !== "running");
  for (const record of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED))) {
    processes.delete(record.processId);
  }
}

/**
 * Starts `argv`. Without `background` it resolves when the command ends (or after yieldMs, when it
 * moves to the background); with it, at once. `recordAs` puts it in the main shell's history.
 */
export function start({
  callId,
  argv,
  command,
  cwd,
  env,
  timeoutMs,
  background = false,
  yieldMs,
  recordAs,
  maxChars,
  head,
}: StartArgs): Promise<AgentProcessResult> {
  const keepStdin = background || yieldMs !== undefined;
  const [program, ...args] = argv as [string, ...string[]];
  const child = spawnAsSandboxUser(program, args, {
    cwd,
    env,
    detached: true,
    stdio: [keepStdin ? "pipe" : "ignore", "pipe", "pipe"],
  });
  const entry = recordAs ? history.start({ shellId: "main", kind: recordAs, command, callId }) : null;
  const record: ProcessRecord = {
    processId: `proc_${crypto.randomBytes(5).toString("hex")}`,
    callId,
    command,
    child,
    entry,
    output: entry ? entry.output : new OutputBuffer(),
    status: "running",
    background,
    exitCode: null,
    signal: null,
    timedOut: false,
    cancelled: false,
    startedAt: new Date().toISOString(),
    startedAtMs: Date.now(),
    endedAtMs: null,
    stdinOpen: keepStdin,
    limitsBefore: cgroup.snapshot(),
    limits: null,
    waiters: [],
  };
  processes.set(record.processId, record);
  if (callId) byCall.set(callId, record);
  if (child.pid !== undefined) preferForOomKill(child.pid);

  child.stdout?.on("data", (chunk: Buffer) => record.output.push("stdout", chunk));
  child.stderr?.on("data", (chunk: Buffer) => record.output.push("stderr", chunk));
  child.stdin?.on("error", () => {
    record.stdinOpen = false;
  });

  const timer =
    timeoutMs !== undefined
      ? setTimeout(() => {
          record.timedOut = true;
          if (child.pid !== undefined) killTree(child.pid);
        }, timeoutMs)
      : null;

  let settled = false;
  const settle = (exitCode: number | null, signal: string | null) => {
    if (settled) return;
    settled = true;
    if (timer) clearTimeout(timer);
    record.status = "exited";
    record.exitCode = exitCode;
    record.signal = signal;
    record.endedAtMs = Date.now();
    record.stdinOpen = false;
    record.limits = cgroup.delta(record.limitsBefore);
    if (entry) {
      entry.timedOut = record.timedOut;
      entry.cancelled = record.cancelled;
      history.finish(entry, { exitCode, signal });
    }
    if (callId) byCall.delete(callId);
    for (const wake of record.waiters.splice(0)) wake();
    pruneFinished();
  };
  child.on("error", (error: NodeJS.ErrnoException) => {
    record.output.append(`${program}: ${error.code === "ENOENT" ? "command not found" : error.message}\n`);
    settle(error.code === "ENOENT" ? 127 : 126, null);
  });
  child.on("close", (code, signal) => settle(code, signal));
  child.on("exit", (code, signal) => {
    // A waited-for command leaves nothing behind (a fork bomb would otherwise outlive its call);
    // processes meant to outlive the call are started with background: true.
    if (!record.background && child.pid !== undefined) killTree(child.pid);
    setTimeout(() => settle(code, signal), EXIT_GRACE_MS);
  });

  const result = (): AgentProcessResult => ({
    ...summary(record),
    output: head ? record.output.page(0, maxChars) : record.output.tail(maxChars),
  });
  if (background) return Promise.resolve(result());
  return new Promise((resolve) => {
    const yieldTimer =
      yieldMs !== undefined
        ? setTimeout(() => {
            record.background = true;
            resolve(result());
          }, yieldMs)
        : null;
    record.waiters.push(() => {
      if (yieldTimer) clearTimeout(yieldTimer);
      resolve(result());
    });
  });
}

function find(processId: string): ProcessRecord {
  const record = processes.get(processId);
  if (record === undefined) {
    throw new AgentError("process_not_found", `no process ${processId}; see process {action:"list"}`);
  }
  return record;
}

export function poll({ processId, offset, limit }: AgentPollArgs): AgentProcessPage {
  const record = find(processId);
  return { ...summary(record), page: record.output.page(offset, limit) };
}

export function write({ processId, input, eof }: AgentProcessWriteArgs): Promise<AgentProcessSummary> {
  const record = find(processId);
  const stdin = record.child.stdin;
  if (!record.stdinOpen || !stdin) {
    throw new AgentError(
      "process_stdin_closed",
      `process ${processId} does not accept input (stdin is closed)`,
    );
  }
  return new Promise((resolve, reject) => {
    stdin.write(input, (error) => {
      if (error) return reject(new AgentError("process_stdin_closed", error.message));
      if (eof) {
        stdin.end();
        record.stdinOpen = false;
      }
      resolve(summary(record));
    });
  });
}

export function signalProcess({ processId, signal }: AgentSignalArgs): AgentProcessSummary {
  const record = find(processId);
  if (record.status === "running" && record.child.pid !== undefined) {
    killTree(record.child.pid, signal as NodeJS.Signals);
  }
  return summary(record);
}

export function list(): AgentProcessSummary[] {
  return [...processes.values()].map(summary);
}

/** Interrupt of a tool call: kills its command's whole tree. */
export function cancel(callId: string): boolean {
  const record = byCall.get(callId);
  if (record === undefined || record.child.pid === undefined) return false;
  record.cancelled = true;
  killTree(record.child.pid);
  return true;
}
