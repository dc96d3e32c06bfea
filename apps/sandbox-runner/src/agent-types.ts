// Shapes of the agent's replies (src/agent/*.cjs), as the runner reads them.

export type OutputPage = { from: number; text: string; total: number; dropped: number };

export type LimitDelta = {
  memoryLimitKills: number;
  pidsLimitHits: number;
  /** The workspace filesystem had (almost) no space left when the command ended. */
  workspaceFull?: boolean;
} | null;

export type CommandSummary = {
  commandId: string;
  shellId: string;
  kind: "exec" | "run" | "bash";
  command: string;
  status: "running" | "exited";
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  cancelled: boolean;
  limits: LimitDelta;
  startedAt: string;
  endedAt: string | null;
  outputChars: number;
  outputPreview: string;
};

export type ShellDescription = {
  shellId: string;
  open: boolean;
  busy: boolean;
  pid: number | null;
  closedReason: string | null;
  currentCommand: (CommandSummary & { page: OutputPage }) | null;
  livePreview: string | null;
  cwd: string;
  env: Record<string, string>;
  unset: string[];
};

export type ShellCommandResult = CommandSummary & { output: OutputPage | null; shell: ShellDescription };

export type ProcessSummary = {
  processId: string;
  commandId: string | null;
  command: string;
  status: "running" | "exited";
  background: boolean;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  cancelled: boolean;
  limits: LimitDelta;
  startedAt: string;
  durationMs: number;
  outputChars: number;
  stdinOpen: boolean;
};

export type ProcessResult = ProcessSummary & { output: OutputPage };

export type ReadResult = { path: string; totalLineCount: number; startLine: number; lines: string[] };
export type RawFile = { path: string; exists: boolean; content: string };
export type WriteResult = { path: string; created: boolean; bytes: number };
export type DirEntry = {
  name: string;
  type: "file" | "dir" | "symlink" | "other";
  size: number;
  mtime: string;
  target?: string;
};
export type ListResult = { path: string; entries: DirEntry[]; total: number; truncated: boolean };
export type GlobResult = { path: string; matches: string[]; truncated: boolean };
export type StatResult = {
  path: string;
  type: string;
  size: number;
  mode: string;
  mtime: string;
  readOnly: boolean;
};
