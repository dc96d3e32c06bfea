import { type Duplex, PassThrough } from "node:stream";
import type Docker from "dockerode";

/** Browser processes run as the sandbox user, like commands: never as the agent's root. */
const SANDBOX_USER = "1000:1000";
const ENV = ["HOME=/home/sandbox", "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"];
/** The most a one-shot exec may print: its output is a few lines, anything longer is not ours. */
const MAX_OUTPUT_BYTES = 64 * 1024;

export type ExecResult = { exitCode: number; stdout: string; stderr: string };

/** Runs `cmd` in the container as the sandbox user and collects its (bounded) output. */
export async function execOnce(container: Docker.Container, cmd: string[]): Promise<ExecResult> {
  const exec = await container.exec({
    Cmd: cmd,
    User: SANDBOX_USER,
    Env: ENV,
    AttachStdout: true,
    AttachStderr: true,
  });
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
 * what is written to `input` reaches its stdin, its stdout arrives on `output` (stderr is dropped).
 */
export async function execPipe(
  container: Docker.Container,
  cmd: string[],
): Promise<{ input: Duplex; output: PassThrough }> {
  const exec = await container.exec({
    Cmd: cmd,
    User: SANDBOX_USER,
    Env: ENV,
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
  });
  const stream = await exec.start({ hijack: true, stdin: true });
  const output = new PassThrough();
  container.modem.demuxStream(stream, output, new PassThrough().resume());
  stream.on("end", () => output.end());
  stream.on("close", () => output.end());
  stream.on("error", (error: Error) => output.destroy(error));
  return { input: stream, output };
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
