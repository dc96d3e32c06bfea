import { randomUUID } from "node:crypto";
import {
  createServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

/**
 * The tools the fixture serves, as a real MCP server built with the official SDK lists them: the shapes
 * the platform must handle (annotations, a `$ref`/`oneOf` schema, a name that is not provider-safe).
 */
export const FIXTURE_MCP_TOOLS = [
  {
    name: "echo",
    description: "Echo the text back.",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    annotations: { readOnlyHint: true },
  },
  {
    name: "fail",
    description: "Always answers with an error result.",
    inputSchema: { type: "object", properties: {} },
  },
  {
    name: "slow",
    description: "Waits `ms` milliseconds, then answers; not idempotent.",
    inputSchema: { type: "object", properties: { ms: { type: "integer", minimum: 0 } }, required: ["ms"] },
  },
  {
    name: "Lookup.Record-v2",
    description: "Look a record up by id or by email.",
    inputSchema: {
      type: "object",
      $defs: {
        id: { type: "object", properties: { id: { type: "integer" } }, required: ["id"] },
        email: {
          type: "object",
          properties: { email: { type: "string", format: "email" } },
          required: ["email"],
        },
      },
      properties: { by: { oneOf: [{ $ref: "#/$defs/id" }, { $ref: "#/$defs/email" }] } },
      required: ["by"],
    },
    annotations: { readOnlyHint: true, idempotentHint: true },
  },
];

export interface McpFixture {
  /** `http://127.0.0.1:<port>/mcp`. */
  url: string;
  /** Each tool call the server received: tool name and arguments. */
  calls: Array<{ name: string; arguments: Record<string, unknown> }>;
  /** Every request's headers, to check what the platform sent. */
  headers: Array<Record<string, string | string[] | undefined>>;
  /** Calls that ended because the client cancelled them. */
  cancelled: string[];
  /** Drops every open connection and session and listens again on the same port, as a restart does. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

function mcpServer(fixture: Pick<McpFixture, "calls" | "cancelled">, tools: readonly unknown[]): Server {
  const server = new Server({ name: "wakeloop-fixture", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }) as { tools: typeof FIXTURE_MCP_TOOLS });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    fixture.calls.push({ name: request.params.name, arguments: args });
    switch (request.params.name) {
      case "echo":
        return { content: [{ type: "text", text: String(args.text) }] };
      case "fail":
        return { content: [{ type: "text", text: "the fixture failed on purpose" }], isError: true };
      case "slow": {
        const ms = Number(args.ms);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, ms);
          extra.signal.addEventListener("abort", () => {
            clearTimeout(timer);
            fixture.cancelled.push("slow");
            resolve();
          });
        });
        return { content: [{ type: "text", text: `waited ${ms} ms` }] };
      }
      case "Lookup.Record-v2":
        return {
          content: [{ type: "text", text: JSON.stringify({ found: args.by }) }],
          structuredContent: { found: args.by },
        };
      default:
        throw new Error(`unknown tool ${request.params.name}`);
    }
  });
  return server;
}

/**
 * A real MCP server over streamable HTTP on a local port, with sessions as the SDK's stateful example
 * keeps them (so a client's cancellation reaches the call it cancels); a restart forgets them all.
 * With `token`, every request must carry `Authorization: Bearer <token>`; `tools` lists others than
 * FIXTURE_MCP_TOOLS (a hostile server's listing).
 */
export async function startMcpFixture(
  options: { token?: string; tools?: readonly unknown[] } = {},
): Promise<McpFixture> {
  const sockets = new Set<Socket>();
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let port = 0;
  let http: HttpServer | null = null;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    fixture.headers.push({ ...req.headers });
    if (req.url !== "/mcp") {
      res.writeHead(404).end();
      return;
    }
    if (options.token !== undefined && req.headers.authorization !== `Bearer ${options.token}`) {
      res.writeHead(401, { "content-type": "application/json" }).end('{"error":"unauthorized"}');
      return;
    }
    const sessionId = req.headers["mcp-session-id"];
    const known = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    if (known !== undefined) {
      await known.handleRequest(req, res);
      return;
    }
    if (sessionId !== undefined || req.method !== "POST") {
      // A session this process does not know (it restarted): the client must initialize again.
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":"unknown session"}');
      return;
    }
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    await mcpServer(fixture, options.tools ?? FIXTURE_MCP_TOOLS).connect(transport);
    await transport.handleRequest(req, res);
  }

  async function start(): Promise<void> {
    const server = createServer((req, res) => void handle(req, res));
    server.on("connection", (socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
    fixture.url = `http://127.0.0.1:${port}/mcp`;
    http = server;
  }

  async function stop(): Promise<void> {
    const closing = http;
    http = null;
    if (closing === null) return;
    const open = [...sessions.values()];
    sessions.clear();
    for (const socket of sockets) socket.destroy();
    await Promise.all(open.map((transport) => transport.close().catch(() => undefined)));
    await new Promise<void>((resolve) => closing.close(() => resolve()));
  }

  const fixture: McpFixture = {
    url: "",
    calls: [],
    headers: [],
    cancelled: [],
    async restart() {
      await stop();
      await start();
    },
    close: stop,
  };
  await start();
  return fixture;
}
