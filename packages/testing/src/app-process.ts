import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { createInterface } from "node:readline";

export type LogRecord = Record<string, unknown> & { msg?: string };

/**
 * How an app or CLI is run: its TypeScript source through tsx (development and tests: no build step),
 * or the JavaScript `npm run build` compiled into `dist/` (production, so benchmarks measure it).
 */
export type RunMode = "source" | "dist";

/** `WAKELOOP_RUN=dist` runs the compiled apps; the source is the default. */
export function defaultRunMode(): RunMode {
  return process.env.WAKELOOP_RUN === "dist" ? "dist" : "source";
}

/**
 * The node arguments that run the entry point `source` (`<dir>/src/<path>.ts`, relative to `cwd`) in
 * `mode`; compiled, that is `<dir>/dist/<path>.js`, as production runs it.
 */
export function entryArgs(source: string, mode: RunMode, cwd = process.cwd()): string[] {
  if (mode === "source") return ["--import", "tsx", source];
  const compiled = source.replace("/src/", "/dist/").replace(/\.ts$/, ".js");
  if (!existsSync(resolve(cwd, compiled)))
    throw new Error(`${compiled} is missing: run \`npm run build\` first`);
  return ["--enable-source-maps", compiled];
}

/**
 * One Wakeloop app as its own process, started the way operators start it (`node --import tsx
 * apps/<app>/src/main.ts`, or compiled: `node --enable-source-maps apps/<app>/dist/main.js`), its
 * pino JSON log kept for assertions.
 */
export class AppProcess {
  readonly app: string;
  readonly records: LogRecord[] = [];
  stderr = "";
  readonly exited: Promise<number | null>;
  readonly #child: ChildProcess;
  readonly #waiters = new Set<() => void>();

  constructor(app: string, env: Record<string, string>, options: { cwd?: string; run?: RunMode } = {}) {
    this.app = app;
    const args = entryArgs(`apps/${app}/src/main.ts`, options.run ?? defaultRunMode(), options.cwd);
    this.#child = spawn(process.execPath, args, {
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
      ...(options.cwd !== undefined && { cwd: options.cwd }),
    });
    this.exited = once(this.#child, "exit").then(([code]) => code as number | null);
    createInterface({ input: this.#child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      try {
        this.records.push(JSON.parse(line) as LogRecord);
      } catch {
        this.records.push({ msg: line });
      }
      for (const wake of this.#waiters) wake();
    });
    this.#child.stderr?.on("data", (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** The first log record with this message, waiting for it up to `timeoutMs`. */
  async record(msg: string, timeoutMs: number): Promise<LogRecord> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.records.find((record) => record.msg === msg);
      if (found !== undefined) return found;
      if (Date.now() > deadline || this.#child.exitCode !== null) {
        throw new Error(
          `${this.app}: no "${msg}" log; last records: ${JSON.stringify(this.records.slice(-20))}; stderr: ${this.stderr}`,
        );
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.#waiters.delete(wake);
          resolve();
        };
        this.#waiters.add(wake);
        setTimeout(wake, 100);
      });
    }
  }

  kill(signal: NodeJS.Signals): void {
    if (this.#child.exitCode === null) this.#child.kill(signal);
  }

  async exitCode(timeoutMs: number): Promise<number | null> {
    const timedOut = new Promise<"timed out">((resolve) =>
      setTimeout(resolve, timeoutMs, "timed out").unref(),
    );
    const result = await Promise.race([this.exited, timedOut]);
    if (result === "timed out") {
      this.kill("SIGKILL");
      throw new Error(
        `${this.app} did not exit within ${timeoutMs} ms; records: ${JSON.stringify(this.records.slice(-20))}`,
      );
    }
    return result;
  }
}
