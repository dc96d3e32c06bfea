import { randomUUID } from "node:crypto";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Bus } from "@wakeloop/bus";
import { SandboxMcpFrame, type SandboxMcpOpenRequest } from "@wakeloop/contracts";
import type { SandboxClient } from "./sandbox-client";
import { sandboxMcpSubject } from "./sandbox-service";

/** What opening the session's stdio server takes: its process address and launch, less the attachment. */
export type StdioLaunch = Omit<SandboxMcpOpenRequest, "attachment">;

/**
 * The SDK `Transport` to an MCP stdio server running in the session's sandbox (docs/mcp.md): each
 * message the client sends is an `mcp_send` request to the runner holding the sandbox, which writes it
 * to the process's stdin; what the process writes to stdout comes back as frames on this attachment's
 * own core-NATS subject. The runner may be another process on another host: only the bus joins them.
 * Closing detaches and leaves the process running for the next wake; the runner closing the attachment
 * (the process exited, or another client took it over) reports an error with its reason, then closes.
 */
export class SandboxMcpTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly attachment = randomUUID().replaceAll("-", "");
  private subscription: ReturnType<Bus["nc"]["subscribe"]> | null = null;
  private closed = false;

  constructor(
    private readonly bus: Pick<Bus, "nc" | "subjects">,
    private readonly sandbox: SandboxClient,
    private readonly launch: StdioLaunch,
  ) {}

  async start(): Promise<void> {
    if (this.subscription !== null) throw new Error("the transport is already started");
    this.subscription = this.bus.nc.subscribe(sandboxMcpSubject(this.bus.subjects.prefix, this.attachment), {
      callback: (error, message) => {
        if (error) this.end(error);
        else this.frame(message.string());
      },
    });
    // The subscription reaches the server before the runner can publish the first frame to it.
    await this.bus.nc.flush();
    try {
      await this.sandbox.mcpOpen({ ...this.launch, attachment: this.attachment });
    } catch (error) {
      this.closed = true;
      this.subscription.unsubscribe();
      throw error;
    }
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) throw new Error(`the connection to MCP server "${this.launch.server}" is closed`);
    await this.sandbox.mcpSend({ ...this.address(), message: message as Record<string, unknown> });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.subscription?.unsubscribe();
    // The process stays for the next wake; a runner that is gone has nothing to detach.
    await this.sandbox.mcpClose(this.address()).catch(() => undefined);
    this.onclose?.();
  }

  private frame(text: string): void {
    let frame: SandboxMcpFrame;
    try {
      frame = SandboxMcpFrame.parse(JSON.parse(text));
    } catch (error) {
      this.onerror?.(new Error("the sandbox runner sent a malformed MCP frame", { cause: error }));
      return;
    }
    if (frame.type === "closed") {
      this.end(new Error(frame.reason));
      return;
    }
    const message = JSONRPCMessageSchema.safeParse(frame.message);
    if (!message.success) {
      this.onerror?.(
        new Error("the MCP server wrote a message that is not JSON-RPC", { cause: message.error }),
      );
      return;
    }
    this.onmessage?.(message.data);
  }

  /** The runner ended the attachment: an error saying why, then closed. */
  private end(error: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.subscription?.unsubscribe();
    this.onerror?.(error);
    this.onclose?.();
  }

  private address() {
    const { tenant_id, session_id, server } = this.launch;
    return { tenant_id, session_id, server, attachment: this.attachment };
  }
}
