import { Writable } from "node:stream";
import {
  exceedsJsonDepth,
  type McpJsonRpcMessage,
  type SandboxMcpCloseRequest,
  type SandboxMcpFrame,
  type SandboxMcpOpenRequest,
  type SandboxMcpSendRequest,
  WakeloopError,
} from "@wakeloop/contracts";
import type Docker from "dockerode";
import { EXEC_PATH, execEnv, execOnce, execPipe, MCP_SERVER_USER, SANDBOX_USER } from "./container-exec";
import { KeyedMutex } from "./keyed-mutex";
import type { RunnerLog } from "./runner-log";
import type { HeldSandbox } from "./sandbox-registry";

/** Sends a frame to the worker holding an attachment (core NATS in the service; a callback in tests). */
export type McpFramePublisher = (attachment: string, frame: SandboxMcpFrame) => void;

/**
 * Where a relative command or path in a server's arguments is resolved: the session's files, for a
 * server without secrets; a server given the vault's values starts in its own home, where the agent
 * can plant nothing (a module next to the working directory is code too, e.g. for `python3 -m`).
 */
const WORKING_DIR = "/workspace";

/**
 * Prints each file of a server's code that the sandbox user could change or replace: the command as
 * PATH finds it and every absolute file path among the arguments (also after `--opt=`), with every
 * folder above each one. Run as that user, so `-w` answers for it; a file it cannot even see is not its.
 */
const AGENT_WRITABLE_CODE = `
cmd=$(command -v -- "$1") || exit 0
shift
for arg in "$cmd" "$@"; do
  for p in "$arg" "\${arg#*=}"; do
    case "$p" in /*) ;; *) continue ;; esac
    [ -f "$p" ] || continue
    p=$(readlink -f -- "$p")
    while :; do
      if [ -w "$p" ]; then echo "$p"; break; fi
      [ "$p" = / ] && break
      p=$(dirname -- "$p")
    done
  done
done`;
/** The tail of a server's stderr kept for the message that says why it exited. */
const STDERR_TAIL_CHARS = 1_200;
/** A line this long without a newline is not a JSON-RPC message anyone can use: it is dropped. */
const MAX_LINE_BYTES = 16 * 1024 * 1024;

type Attachment = { id: string; tenantId: string };

/** One server process of one session, started by `docker exec` in the session's container. */
type ServerProcess = {
  containerId: string;
  /** Command, arguments and environment: an open with other ones replaces the process. */
  launch: string;
  /** Values of the vault's secrets in its environment, blanked out of the stderr it reports. */
  secrets: string[];
  input: Writable;
  attachment: Attachment | null;
  /**
   * The attached client's JSON-RPC requests not yet answered or cancelled, by the id the process saw
   * (see `send`), to the client's own id: they keep the sandbox busy.
   */
  pending: Map<number, string | number>;
  /** The id the process sees on the next request: never reused while the process lives. */
  nextId: number;
  sandbox: HeldSandbox;
  stderr: string;
  exited: boolean;
};

/**
 * The MCP stdio servers of this runner's sandboxes (docs/mcp.md): one process per session and server,
 * started in the session's container as their own uid (MCP_SERVER_USER: the sandbox user's commands
 * cannot read their environment, which holds the vault's values) on the first `open`, reused by every later
 * attachment (each wake's MCP client attaches, initializes and detaches), started again when it died.
 * Each line the process writes to stdout goes, as a `SandboxMcpFrame`, to the attachment's subject;
 * what the worker sends is written to its stdin. Every client numbers its requests from 0, so the
 * process sees each request under an id of its own and its answer goes back under the client's id,
 * to the client that sent it only: a late answer to an earlier attachment's request is dropped rather
 * than matched with a request of the attachment now. The process dies with its container (idle stop,
 * release), and `forget` drops this side of it.
 */
export class McpStdioServers {
  private readonly processes = new Map<string, Promise<ServerProcess>>();
  /** Opens of one session's server run one at a time: two never start two processes. */
  private readonly opening = new KeyedMutex();

  constructor(
    private readonly docker: Docker,
    private readonly log: RunnerLog,
    private readonly publish: McpFramePublisher,
    /** The largest frame the bus carries; an answer past it becomes a JSON-RPC error for its request. */
    private readonly maxFrameBytes: number,
  ) {}

  /**
   * Attaches `request.attachment` to the session's server, starting the process when none runs, it
   * died, its container changed or its launch differs. A previous attachment is told it was taken over.
   */
  open(sandbox: HeldSandbox, request: SandboxMcpOpenRequest): Promise<{ started: boolean }> {
    const key = processKey(request.session_id, request.server);
    return this.opening.run(key, () => this.openLocked(sandbox, key, request));
  }

  private async openLocked(
    sandbox: HeldSandbox,
    key: string,
    request: SandboxMcpOpenRequest,
  ): Promise<{ started: boolean }> {
    const containerId = sandbox.container?.id;
    if (sandbox.status !== "ready" || containerId === undefined) {
      throw new WakeloopError("sandbox_not_ready", "the sandbox is not running; ensure it first", {
        retryable: true,
      });
    }
    const launch = JSON.stringify([request.command, request.args, request.env]);
    let started = false;
    let running = await this.processes.get(key)?.catch(() => undefined);
    if (
      running !== undefined &&
      (running.exited || running.containerId !== containerId || running.launch !== launch)
    ) {
      this.stopProcess(key, running, "the server process was replaced");
      running = undefined;
    }
    if (running === undefined) {
      const starting = this.start(sandbox, containerId, key, request, launch);
      this.processes.set(key, starting);
      starting.catch(() => {
        if (this.processes.get(key) === starting) this.processes.delete(key);
      });
      running = await starting;
      started = true;
    }
    const previous = running.attachment;
    if (previous !== null && previous.id !== request.attachment) {
      this.publish(previous.id, { type: "closed", reason: "another client attached to the MCP server" });
    }
    this.settle(running);
    running.attachment = { id: request.attachment, tenantId: request.tenant_id };
    return { started };
  }

  /** Writes one message to the server's stdin; refused unless `request.attachment` holds the server. */
  async send(request: SandboxMcpSendRequest): Promise<void> {
    const running = await this.attached(request);
    let { message } = request;
    if (typeof message.method === "string" && isRequestId(message.id)) {
      message = { ...message, id: this.track(running, message.id) };
    } else if (message.method === "notifications/cancelled") {
      const requestId = this.cancel(running, cancelledId(message));
      // Answered already: passed on as it is, it could name another request under the process's ids.
      if (requestId === undefined) return;
      message = { ...message, params: { ...(message.params as Record<string, unknown>), requestId } };
    }
    running.sandbox.lastUsedAt = Date.now();
    await new Promise<void>((resolve, reject) => {
      running.input.write(`${JSON.stringify(message)}\n`, (error) => {
        if (error) reject(exitedError(running, error.message));
        else resolve();
      });
    });
  }

  /** Detaches; the process keeps running for the next attachment. False when it was not attached. */
  async close(request: SandboxMcpCloseRequest): Promise<boolean> {
    const running = await this.processes
      .get(processKey(request.session_id, request.server))
      ?.catch(() => undefined);
    if (running?.attachment?.id !== request.attachment) return false;
    running.attachment = null;
    this.settle(running);
    return true;
  }

  /** Drops this side of a session's servers (its container stopped or went): they die with it. */
  async forget(sessionId: string): Promise<void> {
    for (const [key, entry] of this.processes) {
      if (!key.startsWith(`${sessionId}/`)) continue;
      const running = await entry.catch(() => undefined);
      if (running !== undefined) this.stopProcess(key, running, "the sandbox stopped");
      else this.processes.delete(key);
    }
  }

  /** Drops every process's pipe (the runner stops; each server sees its stdin end). */
  async stop(): Promise<void> {
    const sessions = new Set([...this.processes.keys()].map((key) => key.split("/")[0] ?? ""));
    for (const sessionId of sessions) await this.forget(sessionId);
  }

  private async start(
    sandbox: HeldSandbox,
    containerId: string,
    key: string,
    request: SandboxMcpOpenRequest,
    launch: string,
  ): Promise<ServerProcess> {
    const container = this.docker.getContainer(containerId);
    // Every value of `env` comes from the tenant's vault (docs/mcp.md).
    const holdsSecrets = Object.keys(request.env).length > 0;
    const workingDir = holdsSecrets ? MCP_SERVER_USER.home : WORKING_DIR;
    const env = [
      ...execEnv(MCP_SERVER_USER),
      ...Object.entries(request.env).map(([name, value]) => `${name}=${value}`),
    ];
    // A missing command would start and exit at once with the runtime's message on the exec stream;
    // asked first, the operator reads which command the image lacks.
    const found = await execOnce(
      container,
      ["sh", "-c", 'command -v -- "$1" >/dev/null', "sh", request.command],
      { as: MCP_SERVER_USER, workingDir },
    );
    if (found.exitCode !== 0) {
      throw new WakeloopError(
        "mcp_command_not_found",
        `the command "${request.command}" is not in the sandbox (not on PATH ${EXEC_PATH} and no ` +
          `executable file at that path under ${workingDir}); add it to the environment's image`,
      );
    }
    if (holdsSecrets) {
      // Code the agent can rewrite would hand it the secrets: such a server gets none.
      const writable = await execOnce(
        container,
        ["sh", "-c", AGENT_WRITABLE_CODE, "sh", request.command, ...request.args],
        { as: SANDBOX_USER, workingDir },
      );
      const paths = [...new Set(writable.stdout.split("\n").filter((line) => line !== ""))];
      if (writable.exitCode !== 0 || paths.length > 0) {
        throw new WakeloopError(
          "mcp_server_code_writable",
          `the server is given vault secrets but runs code the sandbox user can change (${
            paths.join(", ") || "could not check its files"
          }), which would hand the agent those secrets; install the server in the environment's image, ` +
            "or give it no secrets",
        );
      }
    }
    const running: ServerProcess = {
      containerId,
      launch,
      secrets: Object.values(request.env).filter((value) => value.length > 0),
      input: new Writable({ write: (_chunk, _encoding, done) => done() }),
      attachment: null,
      pending: new Map(),
      nextId: 0,
      sandbox,
      stderr: "",
      exited: false,
    };
    const stderr = new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        running.stderr = (running.stderr + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARS);
        done();
      },
    });
    const pipe = await execPipe(container, [request.command, ...request.args], {
      as: MCP_SERVER_USER,
      env,
      workingDir,
      stderr,
    });
    running.input = pipe.input;
    pipe.input.on("error", () => undefined); // a write to a dead process fails its `send`
    let buffered: Buffer[] = [];
    let bufferedBytes = 0;
    let oversized = false;
    pipe.output.on("data", (chunk: Buffer) => {
      let rest = chunk;
      for (let newline = rest.indexOf(10); newline !== -1; newline = rest.indexOf(10)) {
        const line = Buffer.concat([...buffered, rest.subarray(0, newline)]);
        buffered = [];
        bufferedBytes = 0;
        if (!oversized) this.line(running, line);
        else this.log.warn({ key }, "dropped an MCP stdio line past the size limit");
        oversized = false;
        rest = rest.subarray(newline + 1);
      }
      if (oversized || rest.length === 0) return;
      bufferedBytes += rest.length;
      if (bufferedBytes > MAX_LINE_BYTES) {
        oversized = true;
        buffered = [];
        bufferedBytes = 0;
      } else buffered.push(rest);
    });
    pipe.output.on("close", () => void this.exited(key, running, pipe.exitCode));
    pipe.output.on("end", () => void this.exited(key, running, pipe.exitCode));
    pipe.output.on("error", () => void this.exited(key, running, pipe.exitCode));
    this.log.info({ key, containerId, command: request.command }, "MCP stdio server started");
    return running;
  }

  /** One line of the server's stdout: a JSON-RPC message for the attachment, or dropped. */
  private line(running: ServerProcess, line: Buffer): void {
    let message: unknown;
    try {
      message = JSON.parse(line.toString("utf8"));
    } catch {
      return; // not JSON-RPC (a server logging to stdout): MCP's framing has no place for it
    }
    if (typeof message !== "object" || message === null || Array.isArray(message)) return;
    // Forwarding it would throw in JSON.stringify past a few thousand levels; no MCP message nests so deep.
    if (exceedsJsonDepth(message)) return;
    let rpc = message as McpJsonRpcMessage;
    running.sandbox.lastUsedAt = Date.now();
    if (rpc.method === undefined && isRequestId(rpc.id)) {
      const id = this.answered(running, rpc.id);
      // A request of a client that left (its attachment was settled) or that its client cancelled.
      if (id === undefined) return;
      rpc = { ...rpc, id };
    }
    const attachment = running.attachment;
    if (attachment === null) return; // a message for a client that left
    let frame: SandboxMcpFrame = { type: "message", message: rpc };
    if (line.length > this.maxFrameBytes && isRequestId(rpc.id)) {
      frame = {
        type: "message",
        message: {
          jsonrpc: "2.0",
          id: rpc.id,
          error: {
            code: -32603,
            message: `the server's answer is ${line.length} bytes, more than the ${this.maxFrameBytes} the platform carries`,
          },
        },
      };
    }
    this.publish(attachment.id, frame);
  }

  private async exited(
    key: string,
    running: ServerProcess,
    exitCode: () => Promise<number | null>,
  ): Promise<void> {
    if (running.exited) return;
    running.exited = true;
    this.settle(running);
    if (this.processes.get(key) !== undefined) {
      const current = await this.processes.get(key)?.catch(() => undefined);
      if (current === running) this.processes.delete(key);
    }
    const code = await exitCode().catch(() => null);
    const reason = exitedError(running, `exit code ${code ?? "unknown"}`).message;
    this.log.info({ key, exitCode: code }, "MCP stdio server exited");
    if (running.attachment !== null) this.publish(running.attachment.id, { type: "closed", reason });
    running.attachment = null;
  }

  private stopProcess(key: string, running: ServerProcess, reason: string): void {
    if (this.processes.has(key)) this.processes.delete(key);
    running.exited = true;
    this.settle(running);
    if (running.attachment !== null) this.publish(running.attachment.id, { type: "closed", reason });
    running.attachment = null;
    // Its stdin ends: an MCP stdio server exits then (and dies with its container in any case).
    running.input.end();
  }

  private async attached(request: SandboxMcpSendRequest): Promise<ServerProcess> {
    const running = await this.processes
      .get(processKey(request.session_id, request.server))
      ?.catch(() => undefined);
    if (running === undefined || running.exited) {
      throw new WakeloopError(
        "mcp_server_exited",
        `MCP server "${request.server}" is not running; open it again`,
      );
    }
    if (running.attachment?.id !== request.attachment || running.attachment.tenantId !== request.tenant_id) {
      throw new WakeloopError(
        "mcp_not_attached",
        `this client is not attached to MCP server "${request.server}" (another one took it over)`,
      );
    }
    return running;
  }

  /** A request of the attachment, now in flight: the id the process sees it under. */
  private track(running: ServerProcess, id: string | number): number {
    const processId = running.nextId;
    running.nextId += 1;
    running.pending.set(processId, id);
    running.sandbox.inflight += 1;
    return processId;
  }

  /** The attachment's id of the request the process answered; undefined when none in flight has it. */
  private answered(running: ServerProcess, processId: string | number): string | number | undefined {
    if (typeof processId !== "number") return undefined;
    const id = running.pending.get(processId);
    if (id === undefined) return undefined;
    running.pending.delete(processId);
    running.sandbox.inflight -= 1;
    return id;
  }

  /** The process's id of a request the attachment cancels; undefined when none in flight has it. */
  private cancel(running: ServerProcess, id: string | number | undefined): number | undefined {
    for (const [processId, pendingId] of running.pending) {
      if (pendingId !== id) continue;
      running.pending.delete(processId);
      running.sandbox.inflight -= 1;
      return processId;
    }
    return undefined;
  }

  /** Forgets every request in flight: their client left, so the sandbox is no longer busy with them. */
  private settle(running: ServerProcess): void {
    running.sandbox.inflight -= running.pending.size;
    running.pending.clear();
  }
}

function processKey(sessionId: string, server: string): string {
  return `${sessionId}/${server}`;
}

function isRequestId(id: unknown): id is string | number {
  return typeof id === "string" || typeof id === "number";
}

function cancelledId(message: McpJsonRpcMessage): string | number | undefined {
  const params = message.params as { requestId?: unknown } | undefined;
  return isRequestId(params?.requestId) ? params.requestId : undefined;
}

/** Why the server is gone, with its stderr's tail (vault values blanked: they must reach no event). */
function exitedError(running: ServerProcess, what: string): WakeloopError {
  let tail = running.stderr.trim();
  for (const secret of running.secrets) tail = tail.replaceAll(secret, "[secret]");
  return new WakeloopError(
    "mcp_server_exited",
    `the server process exited (${what})${tail.length > 0 ? `; its stderr ends: ${tail}` : ""}`,
  );
}
