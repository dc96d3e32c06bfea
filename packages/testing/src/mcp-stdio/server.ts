import { createHash } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

// A real MCP stdio server written with the SDK, for tests: bundled by esbuild into one file
// (`stdioMcpServerBundle`) and run with the sandbox image's node inside a session's container. It
// never runs on the host.

const server = new McpServer({ name: "wakeloop-stdio-fixture", version: "1.0.0" });
let cancelled = 0;
let calls = 0;

server.registerTool(
  "echo",
  {
    description: "Echo the text back.",
    inputSchema: { text: z.string() },
    annotations: { readOnlyHint: true },
  },
  async ({ text }) => {
    calls += 1;
    return { content: [{ type: "text", text }] };
  },
);

server.registerTool(
  "fail",
  { description: "Always answers with an error result.", inputSchema: {} },
  async () => {
    calls += 1;
    return { content: [{ type: "text", text: "the stdio fixture failed on purpose" }], isError: true };
  },
);

server.registerTool(
  "slow",
  {
    description: "Waits `ms` milliseconds, then answers; not idempotent.",
    inputSchema: { ms: z.number().int().min(0) },
  },
  async ({ ms }, extra) => {
    calls += 1;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      extra.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        cancelled += 1;
        resolve();
      });
    });
    return { content: [{ type: "text", text: `waited ${ms} ms` }] };
  },
);

/** Calls of `hold` waiting for a `release` of their key: tests order answers with them, not with time. */
const held = new Map<string, Array<() => void>>();

server.registerTool(
  "hold",
  {
    description: "Answers once `release` is called with the same key; not idempotent.",
    inputSchema: { key: z.string() },
  },
  async ({ key }) => {
    calls += 1;
    await new Promise<void>((resolve) => held.set(key, [...(held.get(key) ?? []), resolve]));
    return { content: [{ type: "text", text: `released ${key}` }] };
  },
);

server.registerTool(
  "release",
  { description: "Lets every `hold` call of the key answer.", inputSchema: { key: z.string() } },
  async ({ key }) => {
    for (const resolve of held.get(key) ?? []) resolve();
    held.delete(key);
    return { content: [{ type: "text", text: `released ${key}` }] };
  },
);

server.registerTool(
  "stats",
  {
    description: "The process id, its user id, and how many calls it took and saw cancelled.",
    inputSchema: {},
    annotations: { readOnlyHint: true, idempotentHint: true },
  },
  async () => {
    const stats = { pid: process.pid, uid: process.getuid?.() ?? -1, calls, cancelled, cwd: process.cwd() };
    return { content: [{ type: "text", text: JSON.stringify(stats) }], structuredContent: stats };
  },
);

server.registerTool(
  "token_digest",
  {
    description: "The SHA-256 of the FIXTURE_TOKEN environment variable (never the value).",
    inputSchema: {},
    annotations: { readOnlyHint: true },
  },
  async () => {
    const token = process.env.FIXTURE_TOKEN;
    const text = token === undefined ? "unset" : createHash("sha256").update(token).digest("hex");
    return { content: [{ type: "text", text }] };
  },
);

server.registerTool(
  "crash",
  {
    description: "Writes to stderr (FIXTURE_TOKEN too, as a careless server would) and exits with code 3.",
    inputSchema: {},
  },
  async () => {
    process.stderr.write(`the stdio fixture crashes on purpose (token ${process.env.FIXTURE_TOKEN})\n`);
    process.exit(3);
  },
);

server.connect(new StdioServerTransport()).catch((error: unknown) => {
  process.stderr.write(`could not start: ${String(error)}\n`);
  process.exit(1);
});
