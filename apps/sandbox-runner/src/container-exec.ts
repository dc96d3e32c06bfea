import { type Duplex, PassThrough, type Writable } from "node:stream";
import type Docker from "dockerode";

// Processes the runner starts in a container by `docker exec` (the browser, its relays, MCP stdio
// servers) rather than through the agent: they run as the sandbox user, like commands, never as the
// agent's root.

const SANDBOX_USER = "1000:1000";
export const EXEC_ENV = ["HOME=/home/sandbox", "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"];
/** The most a one-shot exec may print: its output is a few lines, anything longer is not ours. */
const MAX_OUTPUT_BYTES = 64 * 1024;

export type ExecResult = { exitCode: number; stdout: string; stderr: string };

export type ExecOptions = {
  /** The process's whole environment (default `EXEC_ENV`). */
  env?: string[];
  workingDir?: string;
};

/** Runs `cmd` in the container as the sandbox user and collects its (bounded) output. */
export async function execOnce(
  container: Docker.Container,
  cmd: string[],
  options: ExecOptions = {},
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
 * Starts `cmd` in the container as the sandbox user with stdin and stdout attached, for a byte pipe:
 * what is written to `input` reaches its stdin, its stdout arrives on `output`, its stderr on
 * `options.stderr` (dropped without one). `exitCode()` asks Docker once the output has ended.
 */
export async function execPipe(
  container: Docker.Container,
  cmd: string[],
  options: ExecOptions & { stderr?: Writable } = {},
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
    User: SANDBOX_USER,
    Env: options.env ?? EXEC_ENV,
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
