// The sandbox agent: the container's long-lived command channel. It reads one JSON request per line
// on stdin ({id, op, args}) and writes one JSON reply per line on stdout ({id, ok, result|error}).
// Requests run concurrently; nothing else may write to stdout.
// First of all the agent gives up root (see sandbox-user.cjs); the modules below create files at load.
require("./sandbox-user").becomeSandboxUser();
const fs = require("node:fs");
const readline = require("node:readline");
const files = require("./files");
const history = require("./history");
const processes = require("./processes");
const { shell, shells, setCwd, setEnv } = require("./shells");
const { AgentError } = require("./errors");
const { BASE_ENV } = require("./base-env");
const { WORKSPACE, READ_ONLY_ROOTS, WORKSPACE_WRITABLE, resolvePath } = require("./paths");

const PROTOCOL = 1;

/** An explicit cwd must be a workspace directory; the shell's own cwd is wherever the shell went. */
function commandCwd(input, shellId = "main") {
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
function commandEnv(shellEnv, extra = {}) {
  if (!shellEnv) return { ...BASE_ENV, ...extra };
  return { ...shell("main").launchEnv(), ...extra };
}

async function shellResult(target, current, waitMs, maxChars, runningMaxChars) {
  await target.wait(current, waitMs);
  const entry = current.entry;
  const running = entry.status === "running";
  return {
    ...history.summary(entry),
    output: entry.output.tail(running ? runningMaxChars : maxChars),
    shell: target.describe(),
  };
}

function live(shellId) {
  const target = shell(shellId);
  if (target.current === null) return null;
  return target.current;
}

const ops = {
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
  "shell.exec": ({ shellId, callId, command, waitMs, maxChars, runningMaxChars }) => {
    const target = shell(shellId);
    const current = target.run(command, { recordAs: "exec", callId });
    return shellResult(target, current, waitMs, maxChars, runningMaxChars);
  },
  "shell.wait": async ({ shellId, waitMs, maxChars, runningMaxChars }) => {
    const target = shell(shellId);
    const current = live(shellId);
    if (current === null) {
      const last = history.last(shellId);
      return {
        ...(last ? history.summary(last) : { status: "idle" }),
        output: last ? last.output.tail(maxChars) : null,
        shell: target.describe(),
      };
    }
    return shellResult(target, current, waitMs, maxChars, runningMaxChars);
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
    const states = {};
    for (const [shellId, target] of shells) states[shellId] = target.state();
    return { states };
  },
};

function reply(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

async function handle(line) {
  let request;
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
  const op = ops[request.op];
  try {
    if (op === undefined) throw new AgentError("unknown_op", `unknown op ${request.op}`);
    reply({ id: request.id, ok: true, result: await op(request.args ?? {}) });
  } catch (error) {
    const code = error instanceof AgentError ? error.code : (error.code ?? "agent_error");
    reply({ id: request.id, ok: false, error: { code: String(code), message: error.message } });
  }
}

process.on("uncaughtException", (error) => {
  process.stderr.write(`sandbox-agent: ${error.stack ?? error}\n`);
});

// libuv starts its thread pool on the first asynchronous fs call. Start it now: under a fork bomb
// (threads count against the pids limit) a thread that cannot be created aborts Node.
fs.stat("/", () => {});

readline.createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY }).on("line", handle);
