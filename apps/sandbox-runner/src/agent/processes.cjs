// One-shot commands (argv, no shell) and background processes. Each runs in its own process group
// (detached) so a timeout, an interrupt or a `process` signal reaches everything it started.
const { spawnAsSandboxUser } = require("./sandbox-user");
const crypto = require("node:crypto");
const history = require("./history");
const { OutputBuffer } = require("./output-buffer");
const { killTree, preferForOomKill } = require("./process-tree");
const { AgentError } = require("./errors");
const cgroup = require("./cgroup");

const KEEP_FINISHED = 50;
/** After the leader exits, how long to wait for its pipes to drain before reporting. */
const EXIT_GRACE_MS = 150;

/** @type {Map<string, object>} process id → record */
const processes = new Map();
/** @type {Map<string, object>} tool call id → running record, for interrupts */
const byCall = new Map();

function summary(record) {
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

function pruneFinished() {
  const finished = [...processes.values()].filter((r) => r.status !== "running");
  for (const record of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED))) {
    processes.delete(record.processId);
  }
}

/**
 * Starts `argv`. mode "wait" resolves when it ends (or after yieldMs, when it moves to the background),
 * "background" resolves at once. `record` puts it in the main shell's history.
 */
function start({
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
}) {
  const keepStdin = background || yieldMs !== undefined;
  const child = spawnAsSandboxUser(argv[0], argv.slice(1), {
    cwd,
    env,
    detached: true,
    stdio: [keepStdin ? "pipe" : "ignore", "pipe", "pipe"],
  });
  const entry = recordAs ? history.start({ shellId: "main", kind: recordAs, command, callId }) : null;
  const record = {
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

  child.stdout.on("data", (chunk) => record.output.push("stdout", chunk));
  child.stderr.on("data", (chunk) => record.output.push("stderr", chunk));
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
  const settle = (exitCode, signal) => {
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
  child.on("error", (error) => {
    record.output.append(`${argv[0]}: ${error.code === "ENOENT" ? "command not found" : error.message}\n`);
    settle(error.code === "ENOENT" ? 127 : 126, null);
  });
  child.on("close", (code, signal) => settle(code, signal));
  child.on("exit", (code, signal) => {
    // A waited-for command leaves nothing behind (a fork bomb would otherwise outlive its call);
    // processes meant to outlive the call are started with background: true.
    if (!record.background && child.pid !== undefined) killTree(child.pid);
    setTimeout(() => settle(code, signal), EXIT_GRACE_MS);
  });

  const result = () => ({
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

function find(processId) {
  const record = processes.get(processId);
  if (record === undefined) {
    throw new AgentError("process_not_found", `no process ${processId}; see process {action:"list"}`);
  }
  return record;
}

function poll({ processId, offset, limit }) {
  const record = find(processId);
  return { ...summary(record), page: record.output.page(offset, limit) };
}

function write({ processId, input, eof }) {
  const record = find(processId);
  if (!record.stdinOpen || record.child.stdin === null) {
    throw new AgentError(
      "process_stdin_closed",
      `process ${processId} does not accept input (stdin is closed)`,
    );
  }
  return new Promise((resolve, reject) => {
    record.child.stdin.write(input, (error) => {
      if (error) return reject(new AgentError("process_stdin_closed", error.message));
      if (eof) {
        record.child.stdin.end();
        record.stdinOpen = false;
      }
      resolve(summary(record));
    });
  });
}

function signalProcess({ processId, signal }) {
  const record = find(processId);
  if (record.status === "running" && record.child.pid !== undefined) killTree(record.child.pid, signal);
  return summary(record);
}

function list() {
  return [...processes.values()].map(summary);
}

/** Interrupt of a tool call: kills its command's whole tree. */
function cancel(callId) {
  const record = byCall.get(callId);
  if (record === undefined || record.child.pid === undefined) return false;
  record.cancelled = true;
  killTree(record.child.pid);
  return true;
}

module.exports = { start, poll, write, signalProcess, list, cancel };
