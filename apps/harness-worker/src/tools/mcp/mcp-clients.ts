import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { Bus } from "@wakeloop/bus";
import {
  type EnvironmentConfig,
  exceedsJsonDepth,
  jsonDepthMessage,
  type McpListedTool,
  type McpServerListing,
  type McpServerSpec,
  type McpStdioServerSpec,
  mcpServerSecrets,
  type VaultSecretRef,
  WakeloopError,
} from "@wakeloop/contracts";
import type { Database } from "@wakeloop/db";
import { type Fetch, findEgressError } from "@wakeloop/egress";
import { type CredentialCipher, openVaultSecrets } from "@wakeloop/provider-credentials";
import { type SandboxClient, SandboxMcpTransport } from "@wakeloop/sandbox-client";
import type { Kysely } from "kysely";
import type { ToolOutcome } from "../tool-outcome";
import { errorOutcome } from "../tool-outcome";
import { type McpBlock, mcpResultContent } from "./mcp-content";

/** What every wake's MCP clients share: the egress-guarded fetch and the vault's cipher. */
export interface McpAccess {
  /** The egress guard for MCP servers: redirects refused, since requests carry vault credentials. */
  fetch: Fetch;
  cipher: CredentialCipher;
  db: Kysely<Database>;
  /** Connecting and listing one server's tools at a wake's start. */
  listTimeoutMs: number;
}

/**
 * Where the session's stdio servers run: its sandbox, ensured the way sandbox tools ensure it and
 * reached through the runner holding it; or why there is none.
 */
export type McpSandbox =
  | {
      client: SandboxClient;
      bus: Pick<Bus, "nc" | "subjects">;
      sessionId: string;
      agentId: string;
      environment: EnvironmentConfig;
    }
  | { unavailable: string };

const CLIENT_INFO = { name: "wakeloop-harness", version: "0.1.0" };

/** The server went away under a call (closed connection, restart): the call's outcome is unknown. */
class McpConnectionLost extends Error {}

/** The runner refused the message (the stdio server had exited): the call never reached a server. */
class McpNotSent extends Error {}

interface Connection {
  client: Client;
  /** Aborted when the transport fails, so calls waiting on a dead stream end at once. */
  broken: AbortController;
}

/**
 * The MCP servers of one wake (docs/mcp.md): each is connected once, listed at the wake's start and
 * reused by every call of the wake; a connection that broke is dropped and the next call reconnects.
 * Credentials are read from the vault per connection and live only in the transport's headers: never
 * in events, logs, spans or errors.
 */
export class WakeMcpClients {
  private readonly connections = new Map<string, Promise<Connection>>();

  constructor(
    private readonly access: McpAccess,
    private readonly tenantId: string,
    private readonly servers: readonly McpServerSpec[],
    private readonly sandbox: McpSandbox = { unavailable: "this worker runs no sandboxes" },
  ) {}

  /** Lists every server's tools, side by side; a server that does not answer is `unreachable` with why. */
  async list(signal: AbortSignal): Promise<McpServerListing[]> {
    return Promise.all(
      this.servers.map(async (server): Promise<McpServerListing> => {
        // Provisioning the sandbox a stdio server runs in has its own bound (the sandbox client's):
        // the listing's limit starts once it is there.
        if (server.type === "stdio") {
          try {
            await this.ensureSandbox();
          } catch (error) {
            return { name: server.name, status: "unreachable", reason: describe(error).slice(0, 2_000) };
          }
        }
        const limit = AbortSignal.any([signal, AbortSignal.timeout(this.access.listTimeoutMs)]);
        try {
          const { client } = await this.connection(server, limit);
          const tools: McpListedTool[] = [];
          let cursor: string | undefined;
          do {
            const page = await client.listTools(cursor === undefined ? {} : { cursor }, {
              signal: limit,
              timeout: this.access.listTimeoutMs,
            });
            // Schemas are normalized for the provider by recursion every turn: one nested past the
            // limit would fail every wake of the session, so the server is listed as unusable instead.
            if (exceedsJsonDepth(page.tools))
              throw new WakeloopError("mcp_invalid_listing", jsonDepthMessage("the server's tool list"));
            for (const tool of page.tools) {
              tools.push({
                name: tool.name,
                ...(tool.description !== undefined && { description: tool.description }),
                input_schema: tool.inputSchema,
                ...(tool.annotations?.readOnlyHint !== undefined && {
                  read_only: tool.annotations.readOnlyHint,
                }),
                ...(tool.annotations?.destructiveHint !== undefined && {
                  destructive: tool.annotations.destructiveHint,
                }),
                ...(tool.annotations?.idempotentHint !== undefined && {
                  idempotent: tool.annotations.idempotentHint,
                }),
              });
            }
            cursor = page.nextCursor;
          } while (cursor !== undefined);
          return { name: server.name, status: "ready", tools };
        } catch (error) {
          this.drop(server.name);
          const reason =
            limit.aborted && !signal.aborted
              ? `no answer within ${this.access.listTimeoutMs} ms`
              : describe(error);
          return { name: server.name, status: "unreachable", reason: reason.slice(0, 2_000) };
        }
      }),
    );
  }

  /**
   * Calls one tool. The server's own errors (`isError` results, protocol errors, timeouts, a broken
   * connection) are error results for the model; an interrupt is rethrown so the call is recorded as
   * cancelled. A connection lost mid-call is retried once on a new connection only when the tool said
   * it is idempotent; otherwise the outcome is unknown and the model is told so.
   */
  async call(
    serverName: string,
    call: { tool: string; input: Record<string, unknown>; idempotent: boolean },
    signal: AbortSignal,
  ): Promise<ToolOutcome> {
    const server = this.servers.find((entry) => entry.name === serverName);
    if (server === undefined)
      return errorOutcome(`MCP server "${serverName}" is not attached to this session`);
    try {
      return await this.callOnce(server, call, signal);
    } catch (error) {
      if (signal.aborted) throw error;
      if (error instanceof McpNotSent || (error instanceof McpConnectionLost && call.idempotent)) {
        try {
          return await this.callOnce(server, call, signal);
        } catch (retryError) {
          if (signal.aborted) throw retryError;
          return errorOutcome(`MCP server "${server.name}": ${describe(retryError)}`);
        }
      }
      if (error instanceof McpConnectionLost) {
        return errorOutcome(
          `MCP server "${server.name}" closed the connection during the call (${error.message}); the tool ` +
            "is not idempotent, so it was not retried and its outcome is unknown. Check before calling it again.",
        );
      }
      return errorOutcome(`MCP server "${server.name}": ${describe(error)}`);
    }
  }

  private async callOnce(
    server: McpServerSpec,
    call: { tool: string; input: Record<string, unknown> },
    signal: AbortSignal,
  ): Promise<ToolOutcome> {
    const connect = () =>
      this.connection(server, signal).catch((error: unknown) => {
        // Not connected: nothing was sent, so the call did not run.
        throw new Error(`could not connect: ${describe(error)}`, { cause: error });
      });
    let connection = await connect();
    if (connection.broken.signal.aborted) {
      // The stream failed between calls (the server restarted): start over before sending.
      this.drop(server.name);
      connection = await connect();
    }
    try {
      const result = await connection.client.callTool({ name: call.tool, arguments: call.input }, undefined, {
        signal: AbortSignal.any([signal, connection.broken.signal]),
        timeout: server.call_timeout_ms,
      });
      const content = mcpResultContent((result.content ?? []) as McpBlock[], result.structuredContent);
      return {
        content,
        isError: result.isError === true,
        result: result.structuredContent ?? { content },
      };
    } catch (error) {
      if (signal.aborted) throw error;
      if (error instanceof WakeloopError && NOT_SENT.has(error.code)) {
        this.drop(server.name);
        throw new McpNotSent(error.message);
      }
      if (connection.broken.signal.aborted || isTransportFailure(error)) {
        this.drop(server.name);
        throw new McpConnectionLost(describe(connection.broken.signal.reason ?? error));
      }
      throw error;
    }
  }

  private connection(server: McpServerSpec, signal: AbortSignal): Promise<Connection> {
    let connection = this.connections.get(server.name);
    if (connection === undefined) {
      connection = this.connect(server, signal);
      this.connections.set(server.name, connection);
      connection.catch(() => this.drop(server.name));
    }
    return connection;
  }

  private async connect(server: McpServerSpec, signal: AbortSignal): Promise<Connection> {
    const secrets = await openVaultSecrets(
      this.access.db,
      this.access.cipher,
      this.tenantId,
      mcpServerSecrets(server).map((ref) => ref.secret),
    );
    const values = (refs: Record<string, VaultSecretRef>) =>
      Object.fromEntries(
        Object.entries(refs).map(([name, ref]) => [name, `${ref.prefix ?? ""}${secrets.get(ref.secret)}`]),
      );
    const transport =
      server.type === "url"
        ? new StreamableHTTPClientTransport(new URL(server.url), {
            fetch: this.access.fetch,
            requestInit: { headers: values(server.headers) },
            // A dropped stream is not resumed: the call fails fast and the next one reconnects.
            reconnectionOptions: {
              maxRetries: 0,
              initialReconnectionDelay: 0,
              maxReconnectionDelay: 0,
              reconnectionDelayGrowFactor: 1,
            },
          })
        : await this.stdioTransport(server, values(server.env));
    const client = new Client(CLIENT_INFO);
    const broken = new AbortController();
    client.onerror = (error) => {
      if (!broken.signal.aborted) broken.abort(error);
    };
    try {
      await client.connect(transport, { signal, timeout: this.access.listTimeoutMs });
    } catch (error) {
      // A stdio server that exited during `initialize` said why on its transport.
      throw broken.signal.aborted ? broken.signal.reason : error;
    }
    return { client, broken };
  }

  /**
   * A stdio server runs in the session's sandbox: ensured first (idempotent: a running sandbox answers
   * at once), then the runner holding it starts the process or attaches to the running one.
   */
  private async stdioTransport(server: McpStdioServerSpec, env: Record<string, string>): Promise<Transport> {
    const { client, bus, sessionId } = await this.ensureSandbox();
    return new SandboxMcpTransport(bus, client, {
      tenant_id: this.tenantId,
      session_id: sessionId,
      server: server.name,
      command: server.command,
      args: server.args,
      env,
    });
  }

  /** The session's sandbox, ensured like sandbox tools ensure it (a running one answers at once). */
  private async ensureSandbox(): Promise<Exclude<McpSandbox, { unavailable: string }>> {
    const sandbox = this.sandbox;
    if ("unavailable" in sandbox) {
      throw new Error(`stdio MCP servers run in the session's sandbox, and ${sandbox.unavailable}`);
    }
    const { client, sessionId, agentId, environment } = sandbox;
    try {
      await client.ensureSandbox({ tenantId: this.tenantId, sessionId, environment, agentId });
    } catch (error) {
      throw new Error(`the session's sandbox could not be provisioned: ${describe(error)}`, { cause: error });
    }
    return sandbox;
  }

  private drop(name: string): void {
    const connection = this.connections.get(name);
    this.connections.delete(name);
    void connection?.then((open) => open.client.close()).catch(() => undefined);
  }

  /** Closes every connection of the wake (its end). */
  async close(): Promise<void> {
    const open = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(
      open.map((connection) => connection.then((c) => c.client.close()).catch(() => undefined)),
    );
  }
}

/** The runner's refusals of a message to a stdio server that is gone: nothing reached a server. */
const NOT_SENT = new Set(["mcp_server_exited", "mcp_not_attached"]);

function isTransportFailure(error: unknown): boolean {
  if (error instanceof McpError) return error.code === ErrorCode.ConnectionClosed;
  // The server forgot the session (it restarted): the spec's answer is a new session.
  if (error instanceof StreamableHTTPError) return error.code === 404;
  return (
    error instanceof TypeError ||
    (error instanceof Error && /terminated|ECONNRESET|socket|fetch failed/i.test(error.message))
  );
}

/** A failure as one line for the model and `/tools`: the egress rule, the timeout, or the server's words. */
function describe(error: unknown): string {
  const refused = findEgressError(error);
  if (refused) return refused.message;
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) return "the call timed out";
  if (error instanceof TypeError && error.cause instanceof Error) {
    const code = (error.cause as Error & { code?: unknown }).code;
    return `the server could not be reached (${typeof code === "string" ? code : error.cause.message})`;
  }
  return error instanceof Error ? error.message : String(error);
}
