// The sandbox agent: the container's long-lived command channel. It reads one request frame per line
// on stdin ({id, op, args}) and writes one reply frame per line on stdout ({id, ok, result|error}),
// as `AgentRequest`/`AgentReply` in @wakeloop/contracts describe them. Requests run concurrently;
// nothing else may write to stdout. The agent has the protocol's types but not zod: it takes the
// runner's requests on trust (only lines that are not requests at all are dropped), and the runner
// parses every reply, since the agent is inside the sandbox.
import fs from "node:fs";
import readline from "node:readline";
import type { AGENT_PROTOCOL, AgentArgs, AgentOp, AgentReply, AgentResult } from "@wakeloop/contracts";
import { BASE_ENV } from "./base-env";
import { AgentError } from "./errors";
import * as files from "./files";
import * as history from "./history";
import { READ_ONLY_ROOTS, resolvePath, WORKSPACE, WORKSPACE_WRITABLE } from "./paths";
import * as processes from "./processes";
import { becomeSandboxUser } from "./sandbox-user";
import { prepareScratch, type Running, type Shell, setCwd, setEnv, shell, shells } from "./shells";

/** An explicit cwd must be a workspace directory; the shell's own cwd is wherever the shell went. */
function commandCwd(input: string | undefined, shellId = "main"): string {
  const base = shell(shellId).cwd;
  if (input === undefined) return fs.existsSync(base) ? base : WORKSPACE;
  const resolved = resolvePath(input, { cwd: base });
  if (!resolved.stat.isDirectory()) throw new AgentError("not_a_directory", `${input} is not a directory`);
  return resolved.path;
}

/**
 * A command started with `shellEnv` (shell_run) inherits the main shell's exported variables; any
 * other (grep, the inspection `bash`) starts from the fixed base environment, so no variable the
 * model set (RIPGREP_CONFIG_PATH, LD_PRELOAD, …) can make a read-only tool run code.
 */
function commandEnv(shellEnv: boolean, extra: Record<string, string> = {}): Record<string, string> {
  if (!shellEnv) return { ...BASE_ENV, ...extra };
  return { ...shell("main").launchEnv(), ...extra };
}

type Waiting = { waitMs: number; maxChars: number; runningMaxChars: number };

async function shellResult(target: Shell, current: Running, { waitMs, maxChars, runningMaxChars }: Waiting) {
  await target.wait(current, waitMs);
  const entry = current.entry;
  const running = entry.status === "running";
  return {
    ...history.summary(entry),
    output: entry.output.tail(running ? runningMaxChars : maxChars),
    shell: target.describe(),
  };
}

/** Tied to the contracts' number by its type: bumping one without the other does not compile. */
const PROTOCOL: typeof AGENT_PROTOCOL = 1;

type Handlers = {
  [Op in AgentOp]: (args: AgentArgs<Op>) => AgentResult<Op> | Promise<AgentResult<Op>>;
};

const ops: Handlers = {
  hello: () => ({
    protocol: PROTOCOL,
    pid: process.pid,
    workspace: WORKSPACE,
    readOnlyRoots: READ_ONLY_ROOTS,
    workspaceWritable: WORKSPACE_WRITABLE,
  }),

  "fs.read": files.read,
  "fs.readRaw": files.readRaw,
  "fs.write": files.write,
  "fs.remove": files.remove,
  "fs.list": files.list,
  "fs.stat": files.stat,
  "fs.mkdir": files.mkdir,
  "fs.glob": files.glob,

  "cmd.run": (args) =>
    processes.start({
      ...args,
      cwd: commandCwd(args.cwd),
      env: commandEnv(args.shellEnv === true, args.env),
    }),
  "proc.poll": processes.poll,
  "proc.write": processes.write,
  "proc.signal": processes.signalProcess,
  "proc.list": () => ({ processes: processes.list() }),

  "call.cancel": ({ callId }) => {
    if (processes.cancel(callId)) return { cancelled: true };
    for (const target of shells.values()) {
      if (target.current?.callId === callId) return { cancelled: target.interrupt() };
    }
    return { cancelled: false };
  },

  "shell.open": ({ shellId }) => {
    shell(shellId).start();
    return shell(shellId).describe();
  },
  "shell.exec": ({ shellId, callId, command, ...waiting }) => {
    const target = shell(shellId);
    const current = target.run(command, { recordAs: "exec", callId });
    return shellResult(target, current, waiting);
  },
  "shell.wait": async ({ shellId, ...waiting }) => {
    const target = shell(shellId);
    const current = target.current;
    if (current === null) {
      const last = history.last(shellId);
      if (last === null) return { status: "idle" as const, output: null, shell: target.describe() };
      return {
        ...history.summary(last),
        output: last.output.tail(waiting.maxChars),
        shell: target.describe(),
      };
    }
    return shellResult(target, current, waiting);
  },
  "shell.close": ({ shellId }) => {
    shell(shellId).close("closed by shell_close");
    return shell(shellId).describe();
  },
  "shell.restart": ({ shellId }) => {
    const target = shell(shellId);
    target.close("restarted by shell_restart");
    target.start();
    return target.describe();
  },
  "shell.describe": ({ shellId }) => ({ ...shell(shellId).describe(), recent: history.recent(shellId, 5) }),
  "shell.history": ({ shellId, limit }) => ({ shellId, commands: history.recent(shellId, limit) }),
  "shell.lastOutput": ({ shellId, offset, limit }) => {
    const last = history.last(shellId);
    if (last === null) throw new AgentError("no_command_yet", `shell ${shellId} has not run a command yet`);
    return history.read(last, offset, limit);
  },
  "shell.readCommand": ({ commandId, offset, limit }) => history.read(history.get(commandId), offset, limit),
  "shell.setCwd": ({ shellId, path }) => setCwd(shellId, path),
  "shell.setEnv": ({ shellId, name, value }) => setEnv(shellId, name, value),
  "shell.unsetEnv": ({ shellId, name }) => setEnv(shellId, name, null),
  "shell.restore": ({ states }) => {
    for (const [shellId, state] of Object.entries(states)) shell(shellId).restore(state);
    return { restored: Object.keys(states).length };
  },
  "shell.states": () => {
    const states: Record<string, ReturnType<Shell["state"]>> = {};
    for (const [shellId, target] of shells) states[shellId] = target.state();
    return { states };
  },
};

function reply(message: AgentReply): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

function isOp(op: unknown): op is AgentOp {
  return typeof op === "string" && Object.hasOwn(ops, op);
}

async function handle(line: string): Promise<void> {
  let request: { id?: unknown; op?: unknown; args?: unknown } | null;
  try {
    request = JSON.parse(line);
  } catch {
    request = null;
  }
  // Other processes in the sandbox may write here too: a line that is not a request is dropped, so
  // it can neither crash the agent nor draw a reply the runner would take for an answer.
  if (typeof request !== "object" || request === null || !Number.isInteger(request.id)) {
    process.stderr.write(`sandbox-agent: unreadable request line (${line.length} chars)\n`);
    return;
  }
  const id = request.id as number;
  try {
    const op = request.op;
    if (!isOp(op)) throw new AgentError("unknown_op", `unknown op ${String(op)}`);
    const handler = ops[op] as (args: unknown) => unknown;
    reply({ id, ok: true, result: await handler(request.args ?? {}) });
  } catch (error) {
    const failed = error as { code?: unknown; message?: unknown };
    const code = error instanceof AgentError ? error.code : (failed.code ?? "agent_error");
    reply({ id, ok: false, error: { code: String(code), message: String(failed.message) } });
  }
}

// First of all the agent gives up root (see sandbox-user.ts); only then does it create any file.
becomeSandboxUser();
prepareScratch();

process.on("uncaughtException", (error) => {
  process.stderr.write(`sandbox-agent: ${error.stack ?? error}\n`);
});

// libuv starts its thread pool on the first asynchronous fs call. Start it now: under a fork bomb
// (threads count against the pids limit) a thread that cannot be created aborts Node.
fs.stat("/", () => {});

readline.createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY }).on("line", handle);
