import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type JetStreamManager, streamNamePrefix } from "@wakeloop/bus";

const DEFAULT_NATS_URL = "nats://127.0.0.1:4222";
const NATS_SERVER = "/usr/sbin/nats-server";

/** The shared test NATS (`WL_TEST_NATS_URL`; test tooling may read the environment, packages may not). */
export function testNatsUrl(): string {
  return process.env.WL_TEST_NATS_URL ?? DEFAULT_NATS_URL;
}

/** A subject prefix no other test file uses, so files can share one NATS side by side. */
export function testPrefix(): string {
  return `t${randomBytes(5).toString("hex")}`;
}

/** Deletes the streams of `prefix` (and with them their consumers), and nothing else. */
export async function cleanupPrefix(jsm: JetStreamManager, prefix: string): Promise<void> {
  const own = `${streamNamePrefix(prefix)}_`;
  const names: string[] = [];
  for await (const name of jsm.streams.names()) if (name.startsWith(own)) names.push(name);
  await Promise.all(names.map((name) => jsm.streams.delete(name)));
}

export interface NatsServer {
  url: string;
  port: number;
  /** Stops the server and deletes its store. */
  stop(): Promise<void>;
  /**
   * Stops the server (SIGTERM unless told otherwise), stays down `downMs`, then starts it again on the
   * same port with the same store, as an operator's restart would.
   */
  restart(options?: { downMs?: number; signal?: NodeJS.Signals }): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
    socket.connect(port, "127.0.0.1");
  });
}

async function waitUntilAccepting(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}:\n${log()}`);
    if (await accepts(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nats-server did not listen on ${port} within 10 s:\n${log()}`);
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/**
 * A private nats-server process for tests that break the server (restart it, take it away). Never the
 * shared one: other test files rely on that staying up.
 */
export async function startNatsServer(options: { jetstream?: boolean } = {}): Promise<NatsServer> {
  const port = await freePort();
  const storeDir = await mkdtemp(join(tmpdir(), "wl-nats-"));
  const args = ["-a", "127.0.0.1", "-p", String(port)];
  if (options.jetstream ?? true) args.push("-js", "-sd", storeDir);
  let output = "";
  let child: ChildProcess;

  const launch = async () => {
    output = "";
    child = spawn(NATS_SERVER, args, { stdio: ["ignore", "ignore", "pipe"] });
    child.stderr?.on("data", (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4_000);
    });
    await waitUntilAccepting(port, child, () => output);
  };
  const halt = async (signal: NodeJS.Signals) => {
    const stopped = exited(child);
    child.kill(signal);
    await stopped;
  };

  await launch();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    async stop() {
      await halt("SIGTERM");
      await rm(storeDir, { recursive: true, force: true });
    },
    async restart({ downMs = 0, signal = "SIGTERM" } = {}) {
      await halt(signal);
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await launch();
    },
  };
}
