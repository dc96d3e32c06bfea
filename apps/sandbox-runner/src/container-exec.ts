import { type Duplex, PassThrough, type Writable } from "node:stream";
import type Docker from "dockerode";
import { BROWSER_HOME, BROWSER_UID, MCP_SERVER_HOME, MCP_SERVER_UID, SANDBOX_HOME } from "./container-spec";

// Processes the runner starts in a container by `docker exec` (the browser, its relays, MCP stdio
// servers) rather than through the agent. None of them runs as the sandbox user (1000), whose
// commands the model chooses: a process of another uid keeps its environment, memory and open files
// out of their reach (/proc wants a matching uid for those), cannot be signalled by them, and writes
// what they cannot rewrite. Docker sets the ids itself, so no capability is needed for it.

/** An identity an exec runs under, with the HOME only it may write (a tmpfs of its own, container-spec.ts). */
export type ExecUser = { user: string; home: string };

/** MCP stdio servers: they hold the vault's values in their environment. */
export const MCP_SERVER_USER: ExecUser = {
  user: `${MCP_SERVER_UID}:${MCP_SERVER_UID}`,
  home: MCP_SERVER_HOME,
};
/** The sandbox user the agent's commands run as: for asking what those commands could change. */
export const SANDBOX_USER: ExecUser = { user: "1000:1000", home: SANDBOX_HOME };
/** Chromium and the relays to its DevTools port. */
export const BROWSER_USER: ExecUser = { user: `${BROWSER_UID}:${BROWSER_UID}`, home: BROWSER_HOME };
/**
 * The container's root, with only the container's CAP_SETUID and CAP_SETGID: for the browser's
 * launcher, which writes the endpoint record no other uid can change and starts Chromium as
 * BROWSER_USER (hence the browser's HOME).
 */
export const BROWSER_LAUNCHER: ExecUser = { user: "0:0", home: BROWSER_HOME };

export const EXEC_PATH = "/usr/local/bin:/usr/bin:/bin";

/** The environment an exec starts from: its own HOME, the image's PATH. */
export function execEnv(who: ExecUser): string[] {
  return [`HOME=${who.home}`, `PATH=${EXEC_PATH}`, "LANG=C.UTF-8"];
}

/** The most a one-shot exec may print: its output is a few lines, anything longer is not ours. */
const MAX_OUTPUT_BYTES = 64 * 1024;

export type ExecResult = { exitCode: number; stdout: string; stderr: string };

export type ExecOptions = {
  as: ExecUser;
  /** The process's whole environment (default `execEnv(as)`). */
  env?: string[];
  workingDir?: string;
};

/** Runs `cmd` in the container as `options.as` and collects its (bounded) output. */
export async function execOnce(
  container: Docker.Container,
  cmd: string[],
  options: ExecOptions,
): Promise<ExecResult> {
  const exec = await container.exec(execSpec(cmd, options, false));
  const stream = await exec.start({ hijack: true, stdin: false });
  const out = bounded();
  const err = bounded();
  container.modem.demuxStream(stream, out.sink, err.sink);
  await new Promise<void>((resolve, reject) => {
    stream.on("end", resolve);
    stream.on("close", resolve);
    stream.on("error", reject);
  });
  const info = await exec.inspect();
  return { exitCode: info.ExitCode ?? -1, stdout: out.text(), stderr: err.text() };
}

/**
 * Starts `cmd` in the container as `options.as` with stdin and stdout attached, for a byte pipe:
 * what is written to `input` reaches its stdin, its stdout arrives on `output`, its stderr on
 * `options.stderr` (dropped without one). `exitCode()` asks Docker once the output has ended.
 */
export async function execPipe(
  container: Docker.Container,
  cmd: string[],
  options: ExecOptions & { stderr?: Writable },
): Promise<{ input: Duplex; output: PassThrough; exitCode(): Promise<number | null> }> {
  const exec = await container.exec(execSpec(cmd, options, true));
  const stream = await exec.start({ hijack: true, stdin: true });
  const output = new PassThrough();
  container.modem.demuxStream(stream, output, options.stderr ?? new PassThrough().resume());
  stream.on("end", () => output.end());
  stream.on("close", () => output.end());
  stream.on("error", (error: Error) => output.destroy(error));
  const exitCode = async () => (await exec.inspect()).ExitCode ?? null;
  return { input: stream, output, exitCode };
}

function execSpec(cmd: string[], options: ExecOptions, stdin: boolean): Docker.ExecCreateOptions {
  return {
    Cmd: cmd,
    User: options.as.user,
    Env: options.env ?? execEnv(options.as),
    ...(options.workingDir !== undefined && { WorkingDir: options.workingDir }),
    AttachStdin: stdin,
    AttachStdout: true,
    AttachStderr: true,
  };
}

function bounded(): { sink: PassThrough; text(): string } {
  const chunks: Buffer[] = [];
  let bytes = 0;
  const sink = new PassThrough();
  sink.on("data", (chunk: Buffer) => {
    if (bytes >= MAX_OUTPUT_BYTES) return;
    chunks.push(chunk.subarray(0, MAX_OUTPUT_BYTES - bytes));
    bytes += chunk.length;
  });
  return { sink, text: () => Buffer.concat(chunks).toString("utf8") };
}
