import { z } from "zod";

// The sandbox agent's protocol: the runner writes one request frame per line to the agent's stdin
// ({id, op, args}) and reads one reply frame per line from its stdout ({id, ok, result|error}). The
// agent is a program inside the sandbox, so the runner parses every reply and its result against
// these schemas; the agent takes the runner's requests on trust and shares only the types (it runs on
// the image's Node, without zod). There are no notification frames: the agent speaks only to answer.

/** Bumped when a change could not be read by the other side; the runner checks it in `hello`. */
export const AGENT_PROTOCOL = 1;

const CallId = z.number().int().positive();
const Count = z.number().int().nonnegative();
const Timestamp = z.string();

// ---- results ----------------------------------------------------------------------------------

/** Characters [from, from + text.length) of a command's output; `dropped` are gone for good. */
export const AgentOutputPage = z.object({ from: Count, text: z.string(), total: Count, dropped: Count });
export type AgentOutputPage = z.infer<typeof AgentOutputPage>;

/** What a command did to the container's limits (cgroup counters), null while it runs. */
export const AgentLimitDelta = z
  .object({
    memoryLimitKills: z.number().int(),
    pidsLimitHits: z.number().int(),
    /** The workspace filesystem had (almost) no space left when the command ended. */
    workspaceFull: z.boolean().optional(),
  })
  .nullable();
export type AgentLimitDelta = z.infer<typeof AgentLimitDelta>;

/** How a command or process ran, as far as it has: the same fields in shells' and processes' summaries. */
const RunOutcome = {
  command: z.string(),
  status: z.enum(["running", "exited"]),
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  timedOut: z.boolean(),
  cancelled: z.boolean(),
  limits: AgentLimitDelta,
  startedAt: Timestamp,
  outputChars: Count,
};

export const AgentCommandSummary = z.object({
  commandId: z.string(),
  shellId: z.string(),
  kind: z.enum(["exec", "run", "bash"]),
  ...RunOutcome,
  endedAt: Timestamp.nullable(),
  outputPreview: z.string(),
});
export type AgentCommandSummary = z.infer<typeof AgentCommandSummary>;

/** A command's summary with one page of its output. */
export const AgentCommandPage = AgentCommandSummary.extend({ page: AgentOutputPage });
export type AgentCommandPage = z.infer<typeof AgentCommandPage>;

/** A shell's cwd and exported variables relative to the base environment: what the runner persists. */
export const AgentShellState = z.object({
  cwd: z.string(),
  env: z.record(z.string(), z.string()),
  unset: z.array(z.string()),
});
export type AgentShellState = z.infer<typeof AgentShellState>;

export const AgentShellDescription = AgentShellState.extend({
  shellId: z.string(),
  open: z.boolean(),
  busy: z.boolean(),
  pid: z.number().int().nullable(),
  closedReason: z.string().nullable(),
  currentCommand: AgentCommandPage.nullable(),
  livePreview: z.string().nullable(),
});
export type AgentShellDescription = z.infer<typeof AgentShellDescription>;

export const AgentShellCommandResult = AgentCommandSummary.extend({
  output: AgentOutputPage,
  shell: AgentShellDescription,
});
export type AgentShellCommandResult = z.infer<typeof AgentShellCommandResult>;

/** `shell.wait` on a shell that has not run a command yet. */
export const AgentShellIdle = z.object({
  status: z.literal("idle"),
  output: z.null(),
  shell: AgentShellDescription,
});
export type AgentShellIdle = z.infer<typeof AgentShellIdle>;

export const AgentProcessSummary = z.object({
  processId: z.string(),
  commandId: z.string().nullable(),
  ...RunOutcome,
  background: z.boolean(),
  durationMs: z.number(),
  stdinOpen: z.boolean(),
});
export type AgentProcessSummary = z.infer<typeof AgentProcessSummary>;

export const AgentProcessResult = AgentProcessSummary.extend({ output: AgentOutputPage });
export type AgentProcessResult = z.infer<typeof AgentProcessResult>;

export const AgentProcessPage = AgentProcessSummary.extend({ page: AgentOutputPage });
export type AgentProcessPage = z.infer<typeof AgentProcessPage>;

export const AgentReadResult = z.object({
  path: z.string(),
  totalLineCount: Count,
  startLine: z.number().int(),
  lines: z.array(z.string()),
});
export type AgentReadResult = z.infer<typeof AgentReadResult>;

export const AgentRawFile = z.object({ path: z.string(), exists: z.boolean(), content: z.string() });
export type AgentRawFile = z.infer<typeof AgentRawFile>;

export const AgentWriteResult = z.object({ path: z.string(), created: z.boolean(), bytes: Count });
export type AgentWriteResult = z.infer<typeof AgentWriteResult>;

export const AgentDirEntry = z.object({
  name: z.string(),
  type: z.enum(["file", "dir", "symlink", "other"]),
  size: Count,
  mtime: Timestamp,
  target: z.string().optional(),
});
export type AgentDirEntry = z.infer<typeof AgentDirEntry>;

export const AgentListResult = z.object({
  path: z.string(),
  entries: z.array(AgentDirEntry),
  total: Count,
  truncated: z.boolean(),
});
export type AgentListResult = z.infer<typeof AgentListResult>;

export const AgentGlobResult = z.object({
  path: z.string(),
  matches: z.array(z.string()),
  truncated: z.boolean(),
});
export type AgentGlobResult = z.infer<typeof AgentGlobResult>;

export const AgentStatResult = z.object({
  path: z.string(),
  type: AgentDirEntry.shape.type,
  size: Count,
  mode: z.string(),
  mtime: Timestamp,
  readOnly: z.boolean(),
});
export type AgentStatResult = z.infer<typeof AgentStatResult>;

export const AgentHello = z.object({
  protocol: z.number().int(),
  pid: z.number().int(),
  workspace: z.string(),
  readOnlyRoots: z.array(z.string()),
  workspaceWritable: z.boolean(),
});
export type AgentHello = z.infer<typeof AgentHello>;

// ---- arguments --------------------------------------------------------------------------------

const Path = z.string();
const ShellId = z.object({ shellId: z.string() });
const Page = { offset: z.number().int().nonnegative(), limit: z.number().int().nonnegative() };
/** How long a shell command is waited for and how much of its output comes back. */
const ShellWaiting = {
  waitMs: z.number().int().nonnegative(),
  maxChars: z.number().int().nonnegative(),
  runningMaxChars: z.number().int().nonnegative(),
};

export const AgentFsArgs = z.object({ path: Path, cwd: z.string().optional() });
export type AgentFsArgs = z.infer<typeof AgentFsArgs>;

/** Lines [offset, offset + limit), 1-based; the whole file without them. */
export const AgentReadArgs = AgentFsArgs.extend({
  offset: z.number().int().positive().optional(),
  limit: z.number().int().positive().optional(),
});
export type AgentReadArgs = z.infer<typeof AgentReadArgs>;

export const AgentReadRawArgs = AgentFsArgs.extend({ missingOk: z.boolean().optional() });
export type AgentReadRawArgs = z.infer<typeof AgentReadRawArgs>;

export const AgentWriteArgs = AgentFsArgs.extend({ content: z.string(), append: z.boolean().optional() });
export type AgentWriteArgs = z.infer<typeof AgentWriteArgs>;

export const AgentListArgs = AgentFsArgs.extend({ path: Path.optional(), all: z.boolean().optional() });
export type AgentListArgs = z.infer<typeof AgentListArgs>;

export const AgentGlobArgs = AgentFsArgs.extend({
  path: Path.optional(),
  pattern: z.string(),
  kind: z.enum(["any", "file", "dir"]).optional(),
  limit: z.number().int().positive().optional(),
});
export type AgentGlobArgs = z.infer<typeof AgentGlobArgs>;

export const AgentRunArgs = z.object({
  callId: z.string().optional(),
  argv: z.array(z.string()).min(1),
  command: z.string(),
  cwd: z.string().optional(),
  /** Start from the main shell's exported variables (shell_run) rather than the base environment. */
  shellEnv: z.boolean().optional(),
  env: z.record(z.string(), z.string()).optional(),
  timeoutMs: z.number().int().positive().optional(),
  background: z.boolean().optional(),
  /** Wait this long, then leave the command running in the background. */
  yieldMs: z.number().int().nonnegative().optional(),
  /** Put the command in the main shell's history as this kind. */
  recordAs: z.enum(["run", "bash"]).optional(),
  maxChars: z.number().int().nonnegative(),
  /** Return the start of the output rather than its end. */
  head: z.boolean().optional(),
});
export type AgentRunArgs = z.infer<typeof AgentRunArgs>;

export const AgentProcessArgs = z.object({ processId: z.string() });
export type AgentProcessArgs = z.infer<typeof AgentProcessArgs>;

export const AgentPollArgs = AgentProcessArgs.extend(Page);
export type AgentPollArgs = z.infer<typeof AgentPollArgs>;

export const AgentProcessWriteArgs = AgentProcessArgs.extend({
  input: z.string(),
  eof: z.boolean().optional(),
});
export type AgentProcessWriteArgs = z.infer<typeof AgentProcessWriteArgs>;

export const AgentSignalArgs = AgentProcessArgs.extend({ signal: z.string() });
export type AgentSignalArgs = z.infer<typeof AgentSignalArgs>;

export const AgentCancelArgs = z.object({ callId: z.string() });
export type AgentCancelArgs = z.infer<typeof AgentCancelArgs>;

export const AgentShellArgs = ShellId;
export type AgentShellArgs = z.infer<typeof AgentShellArgs>;

export const AgentShellExecArgs = ShellId.extend({
  callId: z.string(),
  command: z.string(),
  ...ShellWaiting,
});
export type AgentShellExecArgs = z.infer<typeof AgentShellExecArgs>;

export const AgentShellWaitArgs = ShellId.extend(ShellWaiting);
export type AgentShellWaitArgs = z.infer<typeof AgentShellWaitArgs>;

export const AgentShellHistoryArgs = ShellId.extend({ limit: z.number().int().positive() });
export type AgentShellHistoryArgs = z.infer<typeof AgentShellHistoryArgs>;

export const AgentShellOutputArgs = ShellId.extend(Page);
export type AgentShellOutputArgs = z.infer<typeof AgentShellOutputArgs>;

export const AgentReadCommandArgs = z.object({ commandId: z.string(), ...Page });
export type AgentReadCommandArgs = z.infer<typeof AgentReadCommandArgs>;

export const AgentSetCwdArgs = ShellId.extend({ path: Path });
export type AgentSetCwdArgs = z.infer<typeof AgentSetCwdArgs>;

export const AgentSetEnvArgs = ShellId.extend({ name: z.string(), value: z.string() });
export type AgentSetEnvArgs = z.infer<typeof AgentSetEnvArgs>;

export const AgentUnsetEnvArgs = ShellId.extend({ name: z.string() });
export type AgentUnsetEnvArgs = z.infer<typeof AgentUnsetEnvArgs>;

export const AgentShellStates = z.object({ states: z.record(z.string(), AgentShellState) });
export type AgentShellStates = z.infer<typeof AgentShellStates>;

const NoArgs = z.object({});

// ---- the ops ----------------------------------------------------------------------------------

/** Every op with its arguments and its result: the one table both sides are typed from. */
export const AgentOps = {
  hello: { args: NoArgs, result: AgentHello },
  "fs.read": { args: AgentReadArgs, result: AgentReadResult },
  "fs.readRaw": { args: AgentReadRawArgs, result: AgentRawFile },
  "fs.write": { args: AgentWriteArgs, result: AgentWriteResult },
  "fs.remove": { args: AgentFsArgs, result: z.object({ path: z.string() }) },
  "fs.list": { args: AgentListArgs, result: AgentListResult },
  "fs.stat": { args: AgentFsArgs, result: AgentStatResult },
  "fs.mkdir": { args: AgentFsArgs, result: z.object({ path: z.string(), created: z.boolean() }) },
  "fs.glob": { args: AgentGlobArgs, result: AgentGlobResult },
  "cmd.run": { args: AgentRunArgs, result: AgentProcessResult },
  "proc.poll": { args: AgentPollArgs, result: AgentProcessPage },
  "proc.write": { args: AgentProcessWriteArgs, result: AgentProcessSummary },
  "proc.signal": { args: AgentSignalArgs, result: AgentProcessSummary },
  "proc.list": { args: NoArgs, result: z.object({ processes: z.array(AgentProcessSummary) }) },
  "call.cancel": { args: AgentCancelArgs, result: z.object({ cancelled: z.boolean() }) },
  "shell.open": { args: AgentShellArgs, result: AgentShellDescription },
  "shell.exec": { args: AgentShellExecArgs, result: AgentShellCommandResult },
  "shell.wait": { args: AgentShellWaitArgs, result: z.union([AgentShellCommandResult, AgentShellIdle]) },
  "shell.close": { args: AgentShellArgs, result: AgentShellDescription },
  "shell.restart": { args: AgentShellArgs, result: AgentShellDescription },
  "shell.describe": {
    args: AgentShellArgs,
    result: AgentShellDescription.extend({ recent: z.array(AgentCommandSummary) }),
  },
  "shell.history": {
    args: AgentShellHistoryArgs,
    result: z.object({ shellId: z.string(), commands: z.array(AgentCommandSummary) }),
  },
  "shell.lastOutput": { args: AgentShellOutputArgs, result: AgentCommandPage },
  "shell.readCommand": { args: AgentReadCommandArgs, result: AgentCommandPage },
  "shell.setCwd": { args: AgentSetCwdArgs, result: AgentShellDescription },
  "shell.setEnv": { args: AgentSetEnvArgs, result: AgentShellDescription },
  "shell.unsetEnv": { args: AgentUnsetEnvArgs, result: AgentShellDescription },
  "shell.restore": { args: AgentShellStates, result: z.object({ restored: Count }) },
  "shell.states": { args: NoArgs, result: AgentShellStates },
} as const;

export type AgentOp = keyof typeof AgentOps;
export type AgentArgs<Op extends AgentOp> = z.input<(typeof AgentOps)[Op]["args"]>;
export type AgentResult<Op extends AgentOp> = z.output<(typeof AgentOps)[Op]["result"]>;

// ---- frames -----------------------------------------------------------------------------------

function requestFrame<Op extends AgentOp>(op: Op) {
  return z.object({ id: CallId, op: z.literal(op), args: AgentOps[op].args });
}

/** runner → agent, one per line. */
export const AgentRequest = z.discriminatedUnion("op", [
  requestFrame("hello"),
  requestFrame("fs.read"),
  requestFrame("fs.readRaw"),
  requestFrame("fs.write"),
  requestFrame("fs.remove"),
  requestFrame("fs.list"),
  requestFrame("fs.stat"),
  requestFrame("fs.mkdir"),
  requestFrame("fs.glob"),
  requestFrame("cmd.run"),
  requestFrame("proc.poll"),
  requestFrame("proc.write"),
  requestFrame("proc.signal"),
  requestFrame("proc.list"),
  requestFrame("call.cancel"),
  requestFrame("shell.open"),
  requestFrame("shell.exec"),
  requestFrame("shell.wait"),
  requestFrame("shell.close"),
  requestFrame("shell.restart"),
  requestFrame("shell.describe"),
  requestFrame("shell.history"),
  requestFrame("shell.lastOutput"),
  requestFrame("shell.readCommand"),
  requestFrame("shell.setCwd"),
  requestFrame("shell.setEnv"),
  requestFrame("shell.unsetEnv"),
  requestFrame("shell.restore"),
  requestFrame("shell.states"),
]);
export type AgentRequest = z.infer<typeof AgentRequest>;

/** agent → runner: the op succeeded; `result` is read with the op's result schema. */
export const AgentReplyOk = z.object({ id: CallId, ok: z.literal(true), result: z.unknown() });
export type AgentReplyOk = z.infer<typeof AgentReplyOk>;

/** agent → runner: the op failed with a stable code (a bad path, a busy shell…) the model is shown. */
export const AgentReplyError = z.object({
  id: CallId,
  ok: z.literal(false),
  error: z.object({ code: z.string().max(200), message: z.string().max(100_000) }),
});
export type AgentReplyError = z.infer<typeof AgentReplyError>;

export const AgentReply = z.discriminatedUnion("ok", [AgentReplyOk, AgentReplyError]);
export type AgentReply = z.infer<typeof AgentReply>;
