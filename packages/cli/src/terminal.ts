import { createInterface, type Interface } from "node:readline";
import { Writable } from "node:stream";
import yoctoSpinner, { type Spinner } from "yocto-spinner";

/** The process's streams, passed in so tests can run the CLI in-process. */
export interface Io {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

export function processIo(): Io {
  return { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr };
}

export const writeLine = (stream: NodeJS.WritableStream, text: string) => stream.write(`${text}\n`);

/** The event stream's `onReconnect`: a note on stderr, so the output itself stays the events. */
export const noteReconnect = (io: Io) => (seq: number) =>
  writeLine(io.stderr, `connection lost; resuming after event ${seq}…`);

/**
 * Line input for interactive commands, on a terminal or a pipe alike: lines typed (or piped) before a
 * question is asked wait in order, and end of input answers null. Questions and notes go to stderr, so
 * `--json` output on stdout stays clean. Ctrl-C calls `onInterrupt`.
 */
export class LineReader {
  readonly #readline: Interface;
  readonly #stderr: NodeJS.WritableStream;
  readonly #lines: string[] = [];
  #waiter: ((line: string | null) => void) | undefined;
  #closed = false;
  /** While a secret is typed, readline's echo is swallowed. */
  #muted = false;

  constructor(io: Io, onInterrupt: () => void) {
    this.#stderr = io.stderr;
    const echo = new Writable({
      write: (chunk, _encoding, done) => {
        if (!this.#muted) io.stderr.write(chunk);
        done();
      },
    });
    this.#readline = createInterface({
      input: io.stdin,
      output: echo,
      terminal: io.stdin.isTTY === true && io.stderr.isTTY === true,
    });
    this.#readline.on("line", (line) => {
      if (this.#waiter) this.#take(line);
      else this.#lines.push(line);
    });
    this.#readline.on("close", () => {
      this.#closed = true;
      this.#take(null);
    });
    this.#readline.on("SIGINT", onInterrupt);
  }

  #take(line: string | null): void {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.(line);
  }

  /**
   * Shows `prompt` and resolves with the next line, or null once input has ended. A `secret` (an API
   * key) is not echoed as it is typed.
   */
  async ask(prompt: string, options: { secret?: boolean } = {}): Promise<string | null> {
    this.#readline.setPrompt(prompt);
    this.#readline.prompt();
    const queued = this.#lines.shift();
    if (queued !== undefined) return queued;
    if (this.#closed) return null;
    this.#muted = options.secret === true;
    try {
      return await new Promise((resolve) => {
        this.#waiter = resolve;
      });
    } finally {
      if (this.#muted) this.#stderr.write("\n");
      this.#muted = false;
    }
  }

  close(): void {
    this.#readline.close();
  }
}

/** "Waiting for the agent" while nothing arrives; silent when stderr is not a terminal. */
export class Progress {
  readonly #spinner: Spinner | null;

  constructor(io: Io) {
    this.#spinner =
      io.stderr.isTTY === true
        ? yoctoSpinner({ stream: io.stderr as NodeJS.WriteStream, handleSignals: false })
        : null;
  }

  start(text: string): void {
    if (this.#spinner && !this.#spinner.isSpinning) this.#spinner.start(text);
  }

  stop(): void {
    if (this.#spinner?.isSpinning) this.#spinner.clear().stop();
  }
}
