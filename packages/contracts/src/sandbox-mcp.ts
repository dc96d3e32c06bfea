import { z } from "zod";
import { Id } from "./ids";
import { McpServerName } from "./mcp";

// The sandbox service's MCP stdio actions (docs/mcp.md, "stdio servers"): the harness worker's MCP
// client speaks JSON-RPC to a server process in the session's container through the runner holding
// it. `mcp_open` attaches the worker to the process (started when none runs), `mcp_send` writes one
// message to its stdin, `mcp_close` detaches; what the process writes to stdout comes back as
// `SandboxMcpFrame`s on the attachment's core-NATS subject.

/** Names one attachment: the token of its frame subject, chosen by the worker. */
export const McpAttachmentId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{8,64}$/, "an attachment id is a subject token");
export type McpAttachmentId = z.infer<typeof McpAttachmentId>;

/** One JSON-RPC message, as MCP's stdio framing carries it (one line of JSON, an object). */
export const McpJsonRpcMessage = z.record(z.string(), z.unknown());
export type McpJsonRpcMessage = z.infer<typeof McpJsonRpcMessage>;

const McpProcessAddress = {
  tenant_id: Id,
  session_id: Id,
  server: McpServerName,
  attachment: McpAttachmentId,
};

export const SandboxMcpOpenRequest = z.object({
  ...McpProcessAddress,
  command: z.string().min(1).max(1_024),
  args: z.array(z.string().max(4_096)).max(64),
  /** The server's environment with the vault's values already in: never logged by the runner. */
  env: z.record(z.string(), z.string()),
});
export type SandboxMcpOpenRequest = z.infer<typeof SandboxMcpOpenRequest>;

export const SandboxMcpOpenResponse = z.object({
  /** True when this open started the process (first use, it had died, or its command changed). */
  started: z.boolean(),
});
export type SandboxMcpOpenResponse = z.infer<typeof SandboxMcpOpenResponse>;

export const SandboxMcpSendRequest = z.object({ ...McpProcessAddress, message: McpJsonRpcMessage });
export type SandboxMcpSendRequest = z.infer<typeof SandboxMcpSendRequest>;

export const SandboxMcpSendResponse = z.object({ sent: z.literal(true) });
export type SandboxMcpSendResponse = z.infer<typeof SandboxMcpSendResponse>;

export const SandboxMcpCloseRequest = z.object(McpProcessAddress);
export type SandboxMcpCloseRequest = z.infer<typeof SandboxMcpCloseRequest>;

export const SandboxMcpCloseResponse = z.object({ closed: z.boolean() });
export type SandboxMcpCloseResponse = z.infer<typeof SandboxMcpCloseResponse>;

/**
 * What the runner publishes on an attachment's subject: a message the process wrote, or the end of
 * the attachment (the process exited, with the tail of its stderr; or another attachment took it over).
 */
export const SandboxMcpFrame = z.discriminatedUnion("type", [
  z.object({ type: z.literal("message"), message: McpJsonRpcMessage }),
  z.object({ type: z.literal("closed"), reason: z.string().max(4_000) }),
]);
export type SandboxMcpFrame = z.infer<typeof SandboxMcpFrame>;
