// Recent commands per shell id (one-shot `shell_run`/`bash` commands belong to the "main" shell's
// history), each with its full output buffer so `shell_read_command` can page through it.
const crypto = require("node:crypto");
const { OutputBuffer } = require("./output-buffer");
const { AgentError } = require("./errors");
const cgroup = require("./cgroup");

const KEEP_PER_SHELL = 50;
const PREVIEW_CHARS = 400;

/** @type {Map<string, object[]>} */
const byShell = new Map();
/** @type {Map<string, object>} */
const byId = new Map();

function start({ shellId, kind, command, callId }) {
  const entry = {
    commandId: `cmd_${crypto.randomBytes(6).toString("hex")}`,
    shellId,
    kind,
    command,
    callId: callId ?? null,
    status: "running",
    startedAt: new Date().toISOString(),
    endedAt: null,
    exitCode: null,
    signal: null,
    timedOut: false,
    cancelled: false,
    output: new OutputBuffer(),
    limitsBefore: cgroup.snapshot(),
    limits: null,
  };
  const list = byShell.get(shellId) ?? [];
  list.push(entry);
  byId.set(entry.commandId, entry);
  while (list.length > KEEP_PER_SHELL) byId.delete(list.shift().commandId);
  byShell.set(shellId, list);
  return entry;
}

function finish(entry, { exitCode = null, signal = null, status = "exited" } = {}) {
  if (entry.status !== "running") return;
  entry.status = status;
  entry.exitCode = exitCode;
  entry.signal = signal;
  entry.endedAt = new Date().toISOString();
  if (entry.limitsBefore) entry.limits = cgroup.delta(entry.limitsBefore);
}

function get(commandId) {
  const entry = byId.get(commandId);
  if (entry === undefined) {
    throw new AgentError("command_not_found", `no recent command ${commandId}; see shell_history`);
  }
  return entry;
}

function last(shellId) {
  const list = byShell.get(shellId) ?? [];
  return list[list.length - 1] ?? null;
}

function summary(entry) {
  const preview = entry.output.tail(PREVIEW_CHARS);
  return {
    commandId: entry.commandId,
    shellId: entry.shellId,
    kind: entry.kind,
    command: entry.command,
    status: entry.status,
    exitCode: entry.exitCode,
    signal: entry.signal,
    timedOut: entry.timedOut,
    cancelled: entry.cancelled,
    limits: entry.limits,
    startedAt: entry.startedAt,
    endedAt: entry.endedAt,
    outputChars: entry.output.total,
    outputPreview: preview.text,
  };
}

function recent(shellId, limit) {
  return (byShell.get(shellId) ?? []).slice(-limit).map(summary);
}

/** One page of a command's output plus its summary. */
function read(entry, offset, limit) {
  return { ...summary(entry), page: entry.output.page(offset, limit) };
}

module.exports = { start, finish, get, last, recent, read, summary };
