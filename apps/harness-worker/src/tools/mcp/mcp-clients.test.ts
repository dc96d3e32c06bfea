import { randomBytes } from "node:crypto";
import { MAX_JSON_DEPTH, McpServerSpec } from "@wakeloop/contracts";
import { createGuardedFetch } from "@wakeloop/egress";
import { CredentialCipher, putVaultSecret } from "@wakeloop/provider-credentials";
import { createTestDatabase, type McpFixture, startMcpFixture, type TestDatabase } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type McpAccess, WakeMcpClients } from "./mcp-clients";

// The worker's MCP client against a real MCP server (the SDK's, in packages/testing) and real Postgres
// for the vault: listing, calls, the server's errors, timeouts, interrupts and a restart mid-call.

const TOKEN = `tok_${randomBytes(8).toString("hex")}`;
let database: TestDatabase;
let fixture: McpFixture;
let access: McpAccess;

beforeAll(async () => {
  database = await createTestDatabase();
  await database.db.insertInto("tenants").values({ id: "tnt_mcp", name: "mcp" }).execute();
  const cipher = new CredentialCipher([{ id: "k1", key: randomBytes(32) }]);
  await putVaultSecret(
    database.db,
    cipher,
    { tenantId: "tnt_mcp", name: "fixture_token", value: TOKEN },
    new Date(),
  );
  fixture = await startMcpFixture({ token: TOKEN });
  access = {
    db: database.db,
    cipher,
    fetch: createGuardedFetch({
      policy: { allowedHosts: ["127.0.0.1"] },
      maxResponseBytes: 1_000_000,
      timeoutMs: 30_000,
      followRedirects: false,
    }),
    listTimeoutMs: 5_000,
  };
});

afterAll(async () => {
  await fixture?.close();
  await database?.drop();
});

function server(fields: Record<string, unknown> = {}): McpServerSpec {
  return McpServerSpec.parse({
    type: "url",
    name: "fixture",
    url: fixture.url,
    headers: { Authorization: { secret: "fixture_token", prefix: "Bearer " } },
    ...fields,
  });
}

const never = new AbortController().signal;

describe("WakeMcpClients", () => {
  it("lists the tools with their annotations, sending the vault's credential", async () => {
    const clients = new WakeMcpClients(access, "tnt_mcp", [server()]);
    const [listing] = await clients.list(never);
    await clients.close();
    expect(listing?.status).toBe("ready");
    if (listing?.status !== "ready") return;
    expect(listing.tools.map((tool) => tool.name)).toEqual(["echo", "fail", "slow", "Lookup.Record-v2"]);
    expect(listing.tools[0]).toMatchObject({ name: "echo", read_only: true });
    expect(listing.tools[3]).toMatchObject({ read_only: true, idempotent: true });
    expect(fixture.headers.at(-1)?.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it("reports a server it cannot use as unreachable, with the reason", async () => {
    const missingSecret = new WakeMcpClients(access, "tnt_mcp", [
      server({ headers: { Authorization: { secret: "not_stored" } } }),
    ]);
    const refused = new WakeMcpClients(access, "tnt_mcp", [server({ url: "http://10.255.255.1/mcp" })]);
    const [noSecret] = await missingSecret.list(never);
    const [private10] = await refused.list(never);
    expect(noSecret).toMatchObject({ status: "unreachable" });
    expect(noSecret?.status === "unreachable" && noSecret.reason).toContain("no secret named not_stored");
    expect(private10?.status === "unreachable" && private10.reason).toContain(
      "egress to 10.255.255.1 is refused",
    );
  });

  it("reports a server whose tool schemas nest past MAX_JSON_DEPTH as unreachable, not a failed wake", async () => {
    // Deep enough for the limit, shallow enough for the fixture's own JSON.stringify.
    const levels = 500;
    const deep = JSON.parse(`${'{"items":'.repeat(levels)}{}${"}".repeat(levels)}`);
    const hostile = await startMcpFixture({
      tools: [{ name: "deep", inputSchema: { type: "object", properties: { x: deep } } }],
    });
    try {
      const clients = new WakeMcpClients(access, "tnt_mcp", [server({ url: hostile.url, headers: {} })]);
      const [listing] = await clients.list(never);
      await clients.close();
      expect(listing).toMatchObject({ status: "unreachable" });
      expect(listing?.status === "unreachable" && listing.reason).toContain(
        `deeper than ${MAX_JSON_DEPTH} levels`,
      );
    } finally {
      await hostile.close();
    }
  });

  it("turns results, isError results and timeouts into outcomes", async () => {
    const clients = new WakeMcpClients(access, "tnt_mcp", [server()]);
    // Its own server entry with a short limit, so a loaded machine cannot time out the other calls.
    const impatient = new WakeMcpClients(access, "tnt_mcp", [server({ call_timeout_ms: 300 })]);
    const echo = await clients.call(
      "fixture",
      { tool: "echo", input: { text: "hi" }, idempotent: true },
      never,
    );
    const fail = await clients.call("fixture", { tool: "fail", input: {}, idempotent: false }, never);
    const slow = await impatient.call(
      "fixture",
      { tool: "slow", input: { ms: 5_000 }, idempotent: false },
      never,
    );
    await impatient.close();
    const lookup = await clients.call(
      "fixture",
      { tool: "Lookup.Record-v2", input: { by: { id: 7 } }, idempotent: true },
      never,
    );
    await clients.close();
    expect(echo).toMatchObject({ isError: false, content: [{ type: "text", text: "hi" }] });
    expect(fail).toMatchObject({
      isError: true,
      content: [{ type: "text", text: "the fixture failed on purpose" }],
    });
    expect(slow.isError).toBe(true);
    expect(slow.content).toEqual([{ type: "text", text: 'MCP server "fixture": the call timed out' }]);
    expect(lookup).toMatchObject({ isError: false, result: { found: { id: 7 } } });
  });

  it("an abort cancels a running call at the server and is rethrown", async () => {
    const clients = new WakeMcpClients(access, "tnt_mcp", [server()]);
    const interrupt = new AbortController();
    const running = clients.call(
      "fixture",
      { tool: "slow", input: { ms: 20_000 }, idempotent: false },
      interrupt.signal,
    );
    await waitFor(() => fixture.calls.some((call) => call.name === "slow" && call.arguments.ms === 20_000));
    const before = fixture.cancelled.length;
    interrupt.abort(new Error("interrupted"));
    await expect(running).rejects.toThrow();
    await waitFor(() => fixture.cancelled.length > before);
    await clients.close();
  });

  it("a restart mid-call is an unknown outcome for a non-idempotent tool, and the next call works", async () => {
    const clients = new WakeMcpClients(access, "tnt_mcp", [server()]);
    const running = clients.call(
      "fixture",
      { tool: "slow", input: { ms: 15_000 }, idempotent: false },
      never,
    );
    await waitFor(() => fixture.calls.some((call) => call.name === "slow" && call.arguments.ms === 15_000));
    await fixture.restart();
    const lost = await running;
    expect(lost.isError).toBe(true);
    expect(lost.content[0]?.type === "text" && lost.content[0].text).toContain("outcome is unknown");
    const next = await clients.call(
      "fixture",
      { tool: "echo", input: { text: "again" }, idempotent: true },
      never,
    );
    expect(next).toMatchObject({ isError: false, content: [{ type: "text", text: "again" }] });
    await clients.close();
  });

  it("reports a stdio server as unreachable when the session has no sandbox, starting nothing", async () => {
    const stdio = McpServerSpec.parse({ type: "stdio", name: "files", command: "node", args: ["server.js"] });
    const clients = new WakeMcpClients(access, "tnt_mcp", [stdio, server()], {
      unavailable: "the session has no environment, so no sandbox",
    });
    const [files, http] = await clients.list(never);
    expect(files).toEqual({
      name: "files",
      status: "unreachable",
      reason:
        "stdio MCP servers run in the session's sandbox, and the session has no environment, so no sandbox",
    });
    // The other servers of the session are listed as usual.
    expect(http?.status).toBe("ready");
    const call = await clients.call("files", { tool: "echo", input: {}, idempotent: true }, never);
    expect(call).toMatchObject({
      isError: true,
      content: [
        {
          type: "text",
          text: 'MCP server "files": could not connect: stdio MCP servers run in the session\'s sandbox, and the session has no environment, so no sandbox',
        },
      ],
    });
    await clients.close();
  });

  it("retries an idempotent call on a new connection when the server restarts under it", async () => {
    const clients = new WakeMcpClients(access, "tnt_mcp", [server()]);
    const running = clients.call("fixture", { tool: "slow", input: { ms: 1_500 }, idempotent: true }, never);
    await waitFor(() => fixture.calls.some((call) => call.name === "slow" && call.arguments.ms === 1_500));
    await fixture.restart();
    const retried = await running;
    expect(retried).toMatchObject({ isError: false, content: [{ type: "text", text: "waited 1500 ms" }] });
    expect(fixture.calls.filter((call) => call.name === "slow" && call.arguments.ms === 1_500)).toHaveLength(
      2,
    );
    await clients.close();
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
