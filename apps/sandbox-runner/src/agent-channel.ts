import type { Duplex } from "node:stream";
import {
  type AgentArgs,
  type AgentOp,
  AgentOps,
  AgentReply,
  type AgentResult,
  exceedsJsonDepth,
  jsonDepthMessage,
  WakeloopError,
} from "@wakeloop/contracts";
import type Docker from "dockerode";
import type { z } from "zod";
import { FrameReader } from "./agent-frames";

// The long-lived command channel: the container's main process is the agent, and the runner talks
// to it over the container's attached stdio (one JSON request/reply per line). Attaching once per
// container, instead of one `docker exec` per call, is what makes a warm round trip cost ~1 ms.
// The other end is inside the sandbox: a reply that is too big, is not JSON or does not match the
// protocol (`AgentReply`, and the op's result schema) closes the channel (its calls fail, the sandbox turns to `error` and is re-attached on the
// next call); it never throws in the runner and never makes it buffer without bound.

/**
 * Largest reply line. The biggest legitimate reply is a raw file read (the agent refuses files over
 * 64 MiB), JSON-escaped; anything larger is not the agent speaking.
 */
const MAX_REPLY_BYTES = 96 * 1024 * 1024;
/** Agent stderr logged per channel; past it a flood from the container is dropped, not logged. */
const STDERR_LOG_BYTES = 64 * 1024;

type Pending = {
  op: AgentOp;
  result: z.ZodType;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout | undefined;
};

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
  private readonly frames: FrameReader;
  private stderrLogged = 0;
  private closedError: WakeloopError | undefined;
  private readonly closeListeners: Array<(error: WakeloopError) => void> = [];

  /** Over the attached stdio of a container (`attach`), or any duplex stream in tests. */
  constructor(
    private readonly stream: Duplex,
    private readonly onStderr: (text: string) => void,
  ) {
    this.frames = new FrameReader(MAX_REPLY_BYTES, {
      line: (line) => this.onLine(line),
      stderr: (chunk) => this.onStderrChunk(chunk),
      oversized: (bytes) => this.violation(`a reply line of more than ${bytes} bytes`),
    });
    stream.on("data", (chunk: Buffer) => this.frames.push(chunk));
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

  /** Sends `op` and resolves with its result, parsed with the op's result schema. */
  call<Op extends AgentOp>(op: Op, args: AgentArgs<Op>, options: CallOptions = {}): Promise<AgentResult<Op>> {
    if (this.closedError) return Promise.reject(this.closedError);
    const id = this.nextId++;
    return new Promise<AgentResult<Op>>((resolve, reject) => {
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
      this.pending.set(id, {
        op,
        result: AgentOps[op].result,
        resolve: resolve as (value: unknown) => void,
        reject,
        timer,
      });
      this.stream.write(`${JSON.stringify({ id, op, args })}\n`);
    });
  }

  close(): void {
    this.fail("the channel was closed by the runner");
    this.stream.destroy();
  }

  private onLine(line: string): void {
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      this.violation(`a line that is not JSON: ${line.slice(0, 200)}`);
      return;
    }
    if (exceedsJsonDepth(json)) {
      this.violation(jsonDepthMessage("a line"));
      return;
    }
    const parsed = AgentReply.safeParse(json);
    if (!parsed.success) {
      this.violation(`a line that is not a reply: ${line.slice(0, 200)}`);
      return;
    }
    const reply = parsed.data;
    const pending = this.pending.get(reply.id);
    if (!pending) return; // answered after its timeout
    if (!reply.ok) {
      this.settle(reply.id, pending);
      pending.reject(new AgentCallError(reply.error.code, reply.error.message));
      return;
    }
    const result = pending.result.safeParse(reply.result);
    if (!result.success) {
      this.violation(`a ${pending.op} result that does not match its schema: ${line.slice(0, 200)}`);
      return;
    }
    this.settle(reply.id, pending);
    pending.resolve(result.data);
  }

  private settle(id: number, pending: Pending): void {
    this.pending.delete(id);
    clearTimeout(pending.timer);
  }

  private onStderrChunk(chunk: Buffer): void {
    if (this.stderrLogged >= STDERR_LOG_BYTES) return;
    this.stderrLogged += chunk.length;
    const text = chunk.subarray(0, STDERR_LOG_BYTES).toString("utf8");
    this.onStderr(
      this.stderrLogged >= STDERR_LOG_BYTES ? `${text}\n[further agent stderr is not logged]` : text,
    );
  }

  /** Only the agent may write replies; anything else on the channel ends it. */
  private violation(what: string): void {
    if (this.closed) return;
    this.onStderr(`the sandbox agent's channel carried ${what}; closing it`);
    this.fail(`the sandbox agent's channel carried ${what.split(":")[0]}`);
    this.stream.destroy();
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
