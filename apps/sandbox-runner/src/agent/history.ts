// Recent commands per shell id (one-shot `shell_run`/`bash` commands belong to the "main" shell's
// history), each with its full output buffer so `shell_read_command` can page through it.
import crypto from "node:crypto";
import type { AgentCommandPage, AgentCommandSummary, AgentLimitDelta } from "@wakeloop/contracts";
import * as cgroup from "./cgroup";
import { AgentError } from "./errors";
import { OutputBuffer } from "./output-buffer";

const KEEP_PER_SHELL = 50;
const PREVIEW_CHARS = 400;

export type CommandKind = AgentCommandSummary["kind"];

export type HistoryEntry = {
  commandId: string;
  shellId: string;
  kind: CommandKind;
  command: string;
  callId: string | null;
  status: AgentCommandSummary["status"];
  startedAt: string;
  endedAt: string | null;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  cancelled: boolean;
  output: OutputBuffer;
  limitsBefore: cgroup.LimitSnapshot;
  limits: AgentLimitDelta;
};

const byShell = new Map<string, HistoryEntry[]>();
const byId = new Map<string, HistoryEntry>();

type EntryStart = { shellId: string; kind: CommandKind; command: string; callId: string | undefined };

function newEntry({ shellId, kind, command, callId }: EntryStart, commandId: string): HistoryEntry {
  return {
    commandId,
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
}

/** An entry kept out of the history (the agent's own `cd`/`export` in a shell); it has no command id. */
export function untracked(shellId: string, command: string): HistoryEntry {
  return newEntry({ shellId, kind: "exec", command, callId: undefined }, "");
}

export function start(started: EntryStart): HistoryEntry {
  const { shellId } = started;
  const entry = newEntry(started, `cmd_${crypto.randomBytes(6).toString("hex")}`);
  const list = byShell.get(shellId) ?? [];
  list.push(entry);
  byId.set(entry.commandId, entry);
  while (list.length > KEEP_PER_SHELL) {
    const dropped = list.shift();
    if (dropped) byId.delete(dropped.commandId);
  }
  byShell.set(shellId, list);
  return entry;
}

export function finish(
  entry: HistoryEntry,
  { exitCode = null, signal = null }: { exitCode?: number | null; signal?: string | null } = {},
): void {
  if (entry.status !== "running") return;
  entry.status = "exited";
  entry.exitCode = exitCode;
  entry.signal = signal;
  entry.endedAt = new Date().toISOString();
  entry.limits = cgroup.delta(entry.limitsBefore);
}

export function get(commandId: string): HistoryEntry {
  const entry = byId.get(commandId);
  if (entry === undefined) {
    throw new AgentError("command_not_found", `no recent command ${commandId}; see shell_history`);
  }
  return entry;
}

export function last(shellId: string): HistoryEntry | null {
  const list = byShell.get(shellId) ?? [];
  return list[list.length - 1] ?? null;
}

export function summary(entry: HistoryEntry): AgentCommandSummary {
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

export function recent(shellId: string, limit: number): AgentCommandSummary[] {
  return (byShell.get(shellId) ?? []).slice(-limit).map(summary);
}

/** One page of a command's output plus its summary. */
export function read(entry: HistoryEntry, offset: number, limit: number): AgentCommandPage {
  return { ...summary(entry), page: entry.output.page(offset, limit) };
}
