// Persistent shells: one long-lived bash per shell id whose cwd and exported variables carry over
// from one command to the next. Each command is written to a file and sourced (so quoting and
// heredocs in it cannot break the protocol), and is followed by a marker line carrying a per-shell
// nonce, the exit code and the new cwd; everything before the marker is the command's output.
import type { ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import type { AgentShellDescription, AgentShellState } from "@wakeloop/contracts";
import { BASE_ENV } from "./base-env";
import { parseExports, shellQuote } from "./env-file";
import { AgentError } from "./errors";
import * as history from "./history";
import { resolvePath, WORKSPACE } from "./paths";
import { killTree, preferForOomKill } from "./process-tree";
import { spawnAsSandboxUser } from "./sandbox-user";

const SCRATCH = "/tmp/.wl";
/** Variables bash maintains itself; they are not part of the session's environment. */
const VOLATILE = new Set(["PWD", "OLDPWD", "SHLVL", "_"]);
/**
 * Variables naming a file that a starting bash (BASH_ENV) or sh (ENV) runs. A new shell or shell_run
 * gets one only when it was set through shell_set_env, which the exec policy checked: a value exported
 * inside a command, or written into the shell's env file by one, stays out of new processes.
 */
const STARTUP_HOOKS = ["BASH_ENV", "ENV"];
/** A command whose process tree is gone but whose shell is still busy is in a shell builtin loop. */
const INTERRUPT_GRACE_MS = 300;
/** Record separator (0x1e): framing for the end-of-command marker line, which carries seq:exit:cwd. */
const RS = String.fromCharCode(0x1e);
const MARKER = new RegExp(`^\n${RS}WL[0-9a-f]+:(\\d+):(\\d+):([^${RS}]*)${RS}\n`);

/** The command a shell is running. */
export type Running = {
  seq: number;
  entry: history.HistoryEntry;
  file: string;
  callId: string | undefined;
  waiters: Array<() => void>;
  killTimer: NodeJS.Timeout | undefined;
};

/**
 * Made once the agent runs as the sandbox user (main.ts), so the directory is that user's; the
 * commands' scripts and the shells' env files go here.
 */
export function prepareScratch(): void {
  fs.mkdirSync(SCRATCH, { recursive: true, mode: 0o700 });
}

export class Shell {
  cwd = WORKSPACE;
  env: Record<string, string> = { ...BASE_ENV };
  /** The STARTUP_HOOKS values set through shell_set_env. */
  hooks: Record<string, string> = {};
  private envDirty = false;
  private child: ChildProcess | null = null;
  current: Running | null = null;
  private pending = "";
  private seq = 0;
  private nonce = "";
  private closedReason: string | null = "not opened yet";

  constructor(readonly id: string) {}

  get open(): boolean {
    return this.child !== null;
  }

  private get envFile(): string {
    return `${SCRATCH}/${this.id}.env`;
  }

  start(): void {
    if (this.open) return;
    let cwd = this.cwd;
    if (!fs.existsSync(cwd)) cwd = WORKSPACE;
    this.nonce = crypto.randomBytes(8).toString("hex");
    const child = spawnAsSandboxUser("bash", ["--noprofile", "--norc"], {
      cwd,
      env: { ...this.launchEnv(), PWD: cwd },
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child = child;
    this.closedReason = null;
    if (child.pid !== undefined) preferForOomKill(child.pid);
    child.stdout?.setEncoding("utf8");
    child.stderr?.setEncoding("utf8");
    child.stdout?.on("data", (text: string) => this.onOutput(text));
    child.stderr?.on("data", (text: string) => this.current?.entry.output.append(text));
    child.stdin?.on("error", () => {});
    child.on("error", (error) => this.onExit(null, null, error.message));
    child.on("exit", (code, signal) => this.onExit(code, signal));
  }

  private onExit(code: number | null, signal: string | null, message?: string): void {
    if (this.child === null) return;
    this.child = null;
    this.closedReason = message ?? `shell exited (${signal ?? `code ${code}`})`;
    const current = this.current;
    if (current) {
      current.entry.output.append(this.pending);
      this.pending = "";
      this.complete(current, { exitCode: code, signal });
    }
  }

  private onOutput(text: string): void {
    const current = this.current;
    if (current === null) return; // output of a process the previous command left running
    this.pending += text;
    const prefix = `\n${RS}WL${this.nonce}:`;
    const at = this.pending.indexOf(prefix);
    if (at === -1) {
      const keep = prefix.length - 1;
      if (this.pending.length > keep) {
        current.entry.output.append(this.pending.slice(0, this.pending.length - keep));
        this.pending = this.pending.slice(this.pending.length - keep);
      }
      return;
    }
    current.entry.output.append(this.pending.slice(0, at));
    this.pending = this.pending.slice(at);
    const marker = MARKER.exec(this.pending);
    if (marker === null) return; // the rest of the marker is still on its way
    this.pending = this.pending.slice(marker[0].length);
    if (Number(marker[1]) !== current.seq) return;
    this.cwd = marker[3] as string;
    this.envDirty = true;
    this.complete(current, { exitCode: Number(marker[2]), signal: null });
  }

  private complete(current: Running, outcome: { exitCode: number | null; signal: string | null }): void {
    if (this.current === current) this.current = null;
    clearTimeout(current.killTimer);
    fs.rm(current.file, { force: true }, () => {});
    history.finish(current.entry, outcome);
    for (const wake of current.waiters.splice(0)) wake();
  }

  /** Runs `command`; `recordAs` puts it in the history (internal cd/export are not recorded). */
  run(command: string, { recordAs, callId }: { recordAs?: "exec"; callId?: string } = {}): Running {
    this.start();
    if (this.current) {
      throw new AgentError(
        "shell_busy",
        `shell ${this.id} is still running \`${this.current.entry.command}\`; use shell_wait or interrupt it`,
      );
    }
    this.seq += 1;
    const file = `${SCRATCH}/${this.id}-${this.seq}.sh`;
    fs.writeFileSync(file, `${command}\n`, { mode: 0o600 });
    const entry = recordAs
      ? history.start({ shellId: this.id, kind: recordAs, command, callId })
      : history.untracked(this.id, command);
    const current: Running = { seq: this.seq, entry, file, callId, waiters: [], killTimer: undefined };
    this.current = current;
    this.child?.stdin?.write(
      `{ . ${shellQuote(file)}; } </dev/null 2>&1\n` +
        `__wl_rc=$?; export -p > ${shellQuote(this.envFile)}; ` +
        `builtin printf '\\n\\036WL%s:%s:%s:%s\\036\\n' ${this.nonce} ${this.seq} "$__wl_rc" "$PWD"\n`,
    );
    return current;
  }

  /** Resolves when `current` ends or after `waitMs`, whichever is first. */
  wait(current: Running, waitMs: number): Promise<void> {
    if (current.entry.status !== "running") return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, waitMs);
      current.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Kills the running command's process tree; a builtin loop that survives that costs the shell. */
  interrupt(): boolean {
    const current = this.current;
    const pid = this.child?.pid;
    if (current === null || pid === undefined) return false;
    if (current.entry.status === "running") current.entry.cancelled = true;
    killTree(pid, "SIGKILL", { keepRoot: true });
    current.killTimer = setTimeout(() => {
      if (this.current === current && this.child !== null) killTree(pid, "SIGKILL");
    }, INTERRUPT_GRACE_MS);
    return true;
  }

  close(reason: string): void {
    if (this.child === null) return;
    const current = this.current;
    if (current && current.entry.status === "running") current.entry.cancelled = true;
    if (this.child.pid !== undefined) killTree(this.child.pid, "SIGKILL");
    this.onExit(null, "SIGKILL", reason);
  }

  refreshEnv(): void {
    if (!this.envDirty) return;
    this.envDirty = false;
    try {
      const env = parseExports(fs.readFileSync(this.envFile, "utf8"));
      for (const name of VOLATILE) delete env[name];
      this.env = env;
    } catch {
      // no command has completed since the shell started
    }
  }

  /** The environment a new process of this shell starts with (a restarted shell, shell_run). */
  launchEnv(): Record<string, string> {
    this.refreshEnv();
    const env = { ...this.env };
    for (const name of STARTUP_HOOKS) {
      const hook = this.hooks[name];
      if (hook !== undefined) env[name] = hook;
      else delete env[name];
    }
    return env;
  }

  /**
   * The shell's state relative to the base environment: what the runner persists and restores. Hooks
   * appear only as set through shell_set_env, so a restored hook is one the policy checked.
   */
  state(): AgentShellState {
    const current = this.launchEnv();
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(current)) {
      if (BASE_ENV[name] !== value) env[name] = value;
    }
    const unset = Object.keys(BASE_ENV).filter((name) => !(name in current));
    return { cwd: this.cwd, env, unset };
  }

  restore({ cwd, env, unset }: AgentShellState): void {
    this.cwd = cwd;
    this.env = { ...BASE_ENV, ...env };
    for (const name of unset) delete this.env[name];
    this.hooks = {};
    for (const name of STARTUP_HOOKS) {
      const hook = env[name];
      if (hook !== undefined) this.hooks[name] = hook;
    }
  }

  describe(): AgentShellDescription {
    const current = this.current;
    return {
      shellId: this.id,
      open: this.open,
      busy: current !== null,
      pid: this.child?.pid ?? null,
      closedReason: this.closedReason,
      currentCommand: current?.entry.commandId ? history.read(current.entry, 0, 0) : null,
      livePreview: current ? current.entry.output.tail(2_000).text : null,
      ...this.state(),
    };
  }
}

export const shells = new Map<string, Shell>();

export function shell(id: string): Shell {
  let found = shells.get(id);
  if (found === undefined) {
    found = new Shell(id);
    shells.set(id, found);
  }
  return found;
}

async function runInternal(target: Shell, command: string): Promise<void> {
  if (!target.open) return;
  const current = target.run(command);
  await target.wait(current, 10_000);
  if (current.entry.status === "running") {
    throw new AgentError("shell_busy", `shell ${target.id} did not finish \`${command}\``);
  }
  if (current.entry.exitCode !== 0) {
    throw new AgentError("shell_command_failed", current.entry.output.tail(2_000).text.trim());
  }
}

export async function setCwd(id: string, input: string): Promise<AgentShellDescription> {
  const target = shell(id);
  const resolved = resolvePath(input, { cwd: target.cwd });
  if (!resolved.stat.isDirectory()) throw new AgentError("not_a_directory", `${input} is not a directory`);
  await runInternal(target, `cd -- ${shellQuote(resolved.path)}`);
  target.cwd = resolved.path;
  return target.describe();
}

export async function setEnv(id: string, name: string, value: string | null): Promise<AgentShellDescription> {
  const target = shell(id);
  await runInternal(target, value === null ? `unset ${name}` : `export ${name}=${shellQuote(value)}`);
  target.refreshEnv();
  if (value === null) delete target.env[name];
  else target.env[name] = value;
  if (STARTUP_HOOKS.includes(name)) {
    if (value === null) delete target.hooks[name];
    else target.hooks[name] = value;
  }
  return target.describe();
}
