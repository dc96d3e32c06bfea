import type { Duplex } from "node:stream";
import { WakeloopError } from "@wakeloop/contracts";
import type Docker from "dockerode";

// The long-lived command channel: the container's main process is the agent, and the runner talks
// to it over the container's attached stdio (one JSON request/reply per line). Attaching once per
// container, instead of one `docker exec` per call, is what makes a warm round trip cost ~1 ms.

type Pending = {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout | undefined;
};

type Reply =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: { code: string; message: string } };

/** An error the agent reported about the request itself (bad path, busy shell…): the model's to see. */
export class AgentCallError extends WakeloopError {
  constructor(code: string, message: string) {
    super(code, message, { retryable: false });
    this.name = "AgentCallError";
  }
}

export type CallOptions = { timeoutMs?: number };

export class AgentChannel {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private buffer: Buffer = Buffer.alloc(0);
  private lineParts: Buffer[] = [];
  private closedError: WakeloopError | undefined;
  private readonly closeListeners: Array<(error: WakeloopError) => void> = [];

  private constructor(
    private readonly stream: Duplex,
    private readonly onStderr: (text: string) => void,
  ) {
    stream.on("data", (chunk: Buffer) => this.onData(chunk));
    stream.on("end", () => this.fail("the sandbox agent's stream ended"));
    stream.on("close", () => this.fail("the sandbox agent's stream closed"));
    stream.on("error", (error) => this.fail(`the sandbox agent's stream failed: ${error.message}`));
  }

  static async attach(container: Docker.Container, onStderr: (text: string) => void): Promise<AgentChannel> {
    const stream = (await container.attach({
      stream: true,
      stdin: true,
      stdout: true,
      stderr: true,
      hijack: true,
    })) as Duplex;
    return new AgentChannel(stream, onStderr);
  }

  get closed(): boolean {
    return this.closedError !== undefined;
  }

  onClose(listener: (error: WakeloopError) => void): void {
    if (this.closedError) listener(this.closedError);
    else this.closeListeners.push(listener);
  }

  call<T>(op: string, args: Record<string, unknown> = {}, options: CallOptions = {}): Promise<T> {
    if (this.closedError) return Promise.reject(this.closedError);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer =
        options.timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              this.pending.delete(id);
              reject(
                new WakeloopError(
                  "sandbox_agent_timeout",
                  `sandbox agent did not answer ${op} in ${options.timeoutMs} ms`,
                  {
                    retryable: true,
                  },
                ),
              );
            }, options.timeoutMs);
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject, timer });
      this.stream.write(`${JSON.stringify({ id, op, args })}\n`);
    });
  }

  close(): void {
    this.fail("the channel was closed by the runner");
    this.stream.destroy();
  }

  /** Docker multiplexes stdout and stderr into frames: 1 byte stream, 3 zero bytes, 4 bytes length. */
  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    while (this.buffer.length >= 8) {
      const size = this.buffer.readUInt32BE(4);
      if (this.buffer.length < 8 + size) return;
      const streamType = this.buffer[0];
      const payload = this.buffer.subarray(8, 8 + size);
      this.buffer = this.buffer.subarray(8 + size);
      if (streamType === 1) this.onStdout(payload);
      else this.onStderr(payload.toString("utf8"));
    }
  }

  private onStdout(payload: Buffer): void {
    let start = 0;
    for (;;) {
      const newline = payload.indexOf(10, start);
      if (newline === -1) {
        if (start < payload.length) this.lineParts.push(payload.subarray(start));
        return;
      }
      this.lineParts.push(payload.subarray(start, newline));
      const line = Buffer.concat(this.lineParts).toString("utf8");
      this.lineParts = [];
      start = newline + 1;
      this.onLine(line);
    }
  }

  private onLine(line: string): void {
    let reply: Reply;
    try {
      reply = JSON.parse(line) as Reply;
    } catch {
      this.onStderr(`unparseable agent output: ${line.slice(0, 200)}`);
      return;
    }
    const pending = this.pending.get(reply.id);
    if (!pending) return; // answered after its timeout
    this.pending.delete(reply.id);
    clearTimeout(pending.timer);
    if (reply.ok) pending.resolve(reply.result);
    else pending.reject(new AgentCallError(reply.error.code, reply.error.message));
  }

  private fail(reason: string): void {
    if (this.closedError) return;
    this.closedError = new WakeloopError("sandbox_channel_closed", reason, { retryable: true });
    for (const [id, pending] of this.pending) {
      clearTimeout(pending.timer);
      pending.reject(this.closedError);
      this.pending.delete(id);
    }
    for (const listener of this.closeListeners.splice(0)) listener(this.closedError);
  }
}
