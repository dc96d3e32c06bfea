import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { copyFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";

/** The Debian package's binary (nats-server 2.9); no container, so a test can give it any config. */
export const NATS_SERVER_BINARY = "/usr/sbin/nats-server";
const READY = "Server is ready";
const STARTUP_MS = 15_000;

export interface LocalNatsServer {
  url: string;
  /** Everything the server logged so far (permission violations among them). */
  log(): string;
  /** Kills the server and removes its directory, JetStream store included. */
  stop(): Promise<void>;
}

export interface LocalNatsServerOptions {
  /** Config lines after `listen` and `jetstream`, e.g. `include ./auth.conf`. */
  config?: string;
  /** Files copied next to the generated config, so its relative `include`s find them. */
  include?: string[];
  /** The server's environment, for `$VARIABLE`s in the config (passwords). */
  env?: Record<string, string>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== "object" || address === null) throw new Error("no free port");
  return address.port;
}

/**
 * A private nats-server process with a generated config on a free port and a JetStream store in a temp
 * directory, for tests of server-side settings such as auth and permissions.
 */
export async function startLocalNatsServer(options: LocalNatsServerOptions = {}): Promise<LocalNatsServer> {
  // The free port can be taken by another process before the server binds it; a new one then does.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      if (attempt >= 3) throw error;
    }
  }
}

async function startOnce(options: LocalNatsServerOptions): Promise<LocalNatsServer> {
  const dir = await mkdtemp(join(tmpdir(), "wl-nats-"));
  for (const file of options.include ?? []) await copyFile(file, join(dir, basename(file)));
  const port = await freePort();
  const configPath = join(dir, "nats-server.conf");
  await writeFile(
    configPath,
    [
      `listen: 127.0.0.1:${port}`,
      `jetstream { store_dir: ${JSON.stringify(join(dir, "store"))} }`,
      options.config ?? "",
    ].join("\n"),
  );
  const server = spawnNatsServer(configPath, options.env);
  const stop = async () => {
    await server.kill();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await server.ready;
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `nats://127.0.0.1:${port}`, log: server.output, stop };
}

export interface NatsServerProcess {
  /** Resolves once the server says it is ready; rejects if it exits or takes too long. */
  ready: Promise<void>;
  output(): string;
  /** SIGKILL, as a crash would; resolves once the process is gone. */
  kill(): Promise<void>;
}

/** Runs the Debian nats-server with `configPath`; `env` fills the `$VARIABLE`s of the config. */
export function spawnNatsServer(configPath: string, env: Record<string, string> = {}): NatsServerProcess {
  const child: ChildProcess = spawn(NATS_SERVER_BINARY, ["-c", configPath], {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`nats-server did not start:\n${output}`)), STARTUP_MS);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(READY)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`nats-server exited with ${String(code)}:\n${output}`));
    });
  });
  // A rejection nobody awaits (the server killed after it was ready) must not end the test process.
  ready.catch(() => {});
  return {
    ready,
    output: () => output,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await once(child, "exit");
      }
    },
  };
}
