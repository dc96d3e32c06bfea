import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import type { SessionEvent } from "@wakeloop/contracts";
import { agentSqlDatabaseUrl, dropDatabase } from "@wakeloop/db";
import { createTestDatabase, entryArgs, Platform, type TestDatabase } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// `npm run build` compiles every service and operator CLI to plain JavaScript (infra/build.mjs). These
// run that output as production does — node on dist/*.js, no tsx — against real Postgres, NATS and
// Docker: the migrate CLI, the tenant CLI, the `wakeloop` CLI, and every service through one sandboxed turn.

const ROOT = join(import.meta.dirname, "..");
const run = promisify(execFile);

let testDb: TestDatabase;
let platform: Platform | undefined;

beforeAll(async () => {
  await run("npm", ["run", "build"], { cwd: ROOT });
  testDb = await createTestDatabase();
}, 120_000);

afterAll(async () => {
  await platform?.stop();
  await testDb?.drop();
});

describe("compiled build", () => {
  it("the compiled migrate CLI creates a database and its agent SQL database and applies every migration", async () => {
    const url = new URL(testDb.url);
    url.pathname = `${url.pathname}_migrate`;
    const migrate = () =>
      run(
        process.execPath,
        [...entryArgs("packages/db/src/migrate-cli.ts", "dist", ROOT), "--url", `${url}`],
        {
          cwd: ROOT,
        },
      );
    try {
      const first = await migrate();
      expect(first.stdout).toMatch(/^created database /m);
      expect(first.stdout).toMatch(/^applied 0001-tenancy$/m);
      expect((await migrate()).stdout).toMatch(/ is up to date$/m);
      // The agent SQL database beside it (db_sql's), made and migrated by the same run.
      expect(first.stdout).toMatch(/^created database .*_migrate_agents$/m);
    } finally {
      await dropDatabase(`${url}`);
      await dropDatabase(agentSqlDatabaseUrl(`${url}`));
    }
  });

  it("`npx wakeloop` runs the compiled CLI", async () => {
    const env = { PATH: process.env.PATH ?? "", XDG_CONFIG_HOME: join(ROOT, "nonexistent-wl-config") };
    const npx = (...args: string[]) => run("npx", ["--no-install", "wakeloop", ...args], { cwd: ROOT, env });
    expect((await npx("--version")).stdout.trim()).toBe("0.1.0");
    expect((await npx("sessions", "--help")).stdout).toContain("Usage: wakeloop sessions");
    await expect(npx("agents", "list")).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining("wakeloop: not logged in"),
    });
  });

  it("every compiled service starts and runs a sandboxed turn", { timeout: 180_000 }, async () => {
    // The tenant is made by the compiled create-tenant CLI; the sandbox-runner's in-container agent is
    // read from dist/agent/, where the build copies it.
    platform = await Platform.start({ run: "dist", workers: 1, sandbox: true });
    const agent = await platform.request("POST", "/v1/agents", {
      name: "compiled",
      model: platform.fakeModel(),
    });
    const environment = await platform.request("POST", "/v1/environments", {
      name: "compiled",
      config: { memory_mb: 256, pids_limit: 128 },
    });
    const session = await platform.request("POST", "/v1/sessions", {
      agent: agent.body.id,
      environment_id: environment.body.id,
    });
    expect(session.status, JSON.stringify(session.body)).toBe(200);
    platform.fake.enqueue(
      { toolCalls: [{ name: "write", input: { path: "built.txt", content: "from dist\n" } }] },
      { toolCalls: [{ name: "read", input: { path: "built.txt" } }] },
      { text: "done" },
    );
    const sent = await platform.request("POST", `/v1/sessions/${session.body.id}/events`, {
      events: [{ type: "user.message", content: [{ type: "text", text: "write and read" }] }],
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    await platform.waitForIdle(session.body.id, "end_turn", 0, 60_000);

    const events = await platform.events(session.body.id);
    const results = events.filter(
      (event): event is Extract<SessionEvent, { type: "agent.tool_result" }> =>
        event.type === "agent.tool_result",
    );
    expect(results.map((result) => result.is_error)).toEqual([false, false]);
    expect(JSON.stringify(results[1]?.content)).toContain("from dist");
    for (const [name, app] of platform.apps) {
      const ready = await app.record("ready", 0);
      const response = await fetch(`http://127.0.0.1:${String(ready.port)}/readyz`);
      expect(response.status, name).toBe(200);
    }
  });
});
