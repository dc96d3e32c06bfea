import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { PermissionViolationError } from "@nats-io/transport-node";
import { type Bus, connectBus, ensureStreams } from "@wakeloop/bus";
import { sandboxMcpSubject, substrateChangedSubject } from "@wakeloop/sandbox-client";
import { createClient } from "@wakeloop/sdk";
import {
  AppProcess,
  type LocalNatsServer,
  Platform,
  startLocalNatsServer,
  testPrefix,
} from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Issue #8 point 10 (NATS): every internal service authenticates with its own user, whose permissions
// (infra/nats/auth.conf, the file docker-compose.yml mounts) cover only what that service does. A
// dedicated nats-server runs that file; the shared test NATS has no auth and is not touched.

const ROOT = join(import.meta.dirname, "..", "..");
const SERVICES = ["gateway", "orchestrator", "harness-worker", "sandbox-runner", "memory-retrieval"] as const;
type Service = (typeof SERVICES)[number];
const passwordVariable = (service: Service) => `NATS_${service.toUpperCase().replaceAll("-", "_")}_PASSWORD`;
// The server parses a `$VARIABLE` value as config, so passwords start with a letter (infra/nats/auth.conf).
const passwords = Object.fromEntries(
  SERVICES.map((service) => [service, `p${randomBytes(12).toString("hex")}`]),
) as Record<Service, string>;

let server: LocalNatsServer;
const open: Bus[] = [];

beforeAll(async () => {
  server = await startLocalNatsServer({
    config: "include ./auth.conf",
    include: [join(ROOT, "infra/nats/auth.conf")],
    env: Object.fromEntries(SERVICES.map((service) => [passwordVariable(service), passwords[service]])),
  });
}, 30_000);

afterAll(async () => {
  await Promise.all(open.map((bus) => bus.close()));
  await server?.stop();
});

async function connectAs(service: Service): Promise<Bus> {
  const bus = await connectBus({
    servers: server.url,
    name: `security-${service}`,
    credentials: { user: service, password: passwords[service] },
  });
  open.push(bus);
  return bus;
}

/** Permission errors the server sent this connection, by the subject they name (reported asynchronously). */
function violations(bus: Bus): string[] {
  const seen: string[] = [];
  void (async () => {
    for await (const status of bus.nc.status())
      if (status.type === "error" && status.error instanceof PermissionViolationError)
        seen.push(status.error.subject);
  })();
  return seen;
}

/** Whether the server kept a subscription: a denied one is closed before the flush's PONG arrives. */
async function canSubscribe(bus: Bus, subject: string): Promise<boolean> {
  const sub = bus.nc.subscribe(subject);
  await bus.nc.flush();
  const kept = !sub.isClosed();
  sub.unsubscribe();
  return kept;
}

describe("NATS authentication and permissions (issue #8 point 10)", () => {
  it("refuses connections without credentials or with wrong ones", async () => {
    await expect(
      connectBus({ servers: server.url, name: "anonymous", connectTimeoutMs: 5_000 }),
    ).rejects.toMatchObject({
      code: "bus_auth_failed",
      retryable: false,
    });
    await expect(
      connectBus({
        servers: server.url,
        name: "wrong",
        credentials: { user: "orchestrator", password: passwords.gateway },
        connectTimeoutMs: 5_000,
      }),
    ).rejects.toMatchObject({ code: "bus_auth_failed" });
  });

  it("has no service start without its NATS credentials unless NATS_ALLOW_ANONYMOUS says development (issue #30 point 7)", {
    timeout: 180_000,
  }, async () => {
    for (const service of SERVICES) {
      // Ports of its own, and the sandbox runner's state out of the way: only the credentials are missing.
      const app = new AppProcess(
        service,
        {
          NATS_URL: server.url,
          WL_SUBJECT_PREFIX: testPrefix(),
          HEALTH_PORT: "0",
          METRICS_PORT: "0",
          PORT: "0",
          SANDBOX_ENABLED: "false",
        },
        { cwd: ROOT },
      );
      expect(await app.exitCode(60_000), service).toBe(1);
      const failed = app.records.find((record) => record.msg === "start-up failed");
      expect(JSON.stringify(failed?.err), service).toContain(
        "NATS_USER and NATS_PASSWORD are not set: set this service's own NATS user (infra/nats/auth.conf), or NATS_ALLOW_ANONYMOUS=true",
      );
      // Refused before any port opened.
      expect(
        app.records.some((record) => record.msg === "ready"),
        service,
      ).toBe(false);
    }
  });

  it("lets each service connect with its own credentials", async () => {
    for (const service of SERVICES) expect((await connectAs(service)).nc.isClosed()).toBe(false);
  });

  it("keeps each service to its own subjects", async () => {
    const orchestrator = await connectAs("orchestrator");
    await ensureStreams(orchestrator.jsm, orchestrator.catalog);
    const gateway = await connectAs("gateway");
    const worker = await connectAs("harness-worker");
    const memory = await connectAs("memory-retrieval");
    const gatewayDenied = violations(gateway);
    const workerDenied = violations(worker);

    // The gateway may publish wake jobs (of the wakes it opens with a client's events; a job only points
    // at a wake row), but it cannot publish events, not even user events (they come from the relay),
    // nor take the sandbox service's requests, nor read others' replies.
    gateway.nc.publish(gateway.subjects.evt("tnt_x", "sess_x", "agent.message"), "{}");
    gateway.nc.publish(gateway.subjects.evt("tnt_x", "sess_x", "session.status_idle"), "{}");
    gateway.nc.publish(gateway.subjects.evt("tnt_x", "sess_x", "user.message"), "{}");
    // Nor forge the model's live deltas: only workers write them, and the gateway streams them.
    const deltas = gateway.subjects.delta("tnt_x", "sess_x");
    gateway.nc.publish(deltas, "{}");
    await gateway.nc.flush();
    await expect
      .poll(() => gatewayDenied)
      .toEqual([
        gateway.subjects.evt("tnt_x", "sess_x", "agent.message"),
        gateway.subjects.evt("tnt_x", "sess_x", "session.status_idle"),
        gateway.subjects.evt("tnt_x", "sess_x", "user.message"),
        deltas,
      ]);
    expect(await canSubscribe(gateway, deltas)).toBe(true);
    // ...which reach it from a worker.
    const streamed = gateway.nc.subscribe(deltas, { max: 1 });
    await gateway.nc.flush();
    worker.nc.publish(deltas, "live");
    for await (const msg of streamed) expect(msg.string()).toBe("live");
    expect(await canSubscribe(gateway, gateway.subjects.svc("sandbox", "exec"))).toBe(false);
    expect(await canSubscribe(gateway, "_INBOX_orchestrator.>")).toBe(false);
    expect(await canSubscribe(gateway, gateway.subjects.evt("tnt_x", "sess_x", "user.message"))).toBe(true);

    // A worker cannot append events behind Postgres' back, publish wake jobs, nor make the
    // runners resync an agent's substrate (only they and the gateway's restore announce changes).
    worker.nc.publish(worker.subjects.evt("tnt_x", "sess_x", "agent.message"), "{}");
    worker.nc.publish(worker.subjects.wake("tnt_x", "sess_x"), "{}");
    worker.nc.publish(substrateChangedSubject(worker.subjects.prefix), "{}");
    await worker.nc.flush();
    await expect
      .poll(() => workerDenied)
      .toEqual([
        worker.subjects.evt("tnt_x", "sess_x", "agent.message"),
        worker.subjects.wake("tnt_x", "sess_x"),
        substrateChangedSubject(worker.subjects.prefix),
      ]);
    const runner = await connectAs("sandbox-runner");
    expect(await canSubscribe(runner, substrateChangedSubject(runner.subjects.prefix))).toBe(true);
    expect(await canSubscribe(worker, worker.subjects.ctl("sess_x"))).toBe(true);
    // Deltas go from workers to the gateway only: no other service reads a session's live answer.
    for (const reader of [worker, runner, memory]) expect(await canSubscribe(reader, deltas)).toBe(false);
    // A stdio MCP server's output goes from the runner running it to the worker that attached to it,
    // and from nobody else: the gateway and the memory service neither read nor forge it.
    const attachment = sandboxMcpSubject(worker.subjects.prefix, "a1");
    expect(await canSubscribe(worker, attachment)).toBe(true);
    expect(await canSubscribe(gateway, attachment)).toBe(false);
    const runnerDenied = violations(runner);
    const memoryDenied = violations(memory);
    runner.nc.publish(attachment, "{}");
    memory.nc.publish(attachment, "{}");
    memory.nc.publish(deltas, "{}");
    await Promise.all([runner.nc.flush(), memory.nc.flush()]);
    await expect.poll(() => memoryDenied).toEqual([attachment, deltas]);
    expect(runnerDenied).toEqual([]);
    // The memory service deletes its retired consumer, and no other.
    const events = orchestrator.catalog.events.stream.name;
    for (const durable_name of ["memory-retrieval-index", "someone-else"])
      await orchestrator.jsm.consumers.add(events, { durable_name });
    await expect(memory.jsm.consumers.delete(events, "memory-retrieval-index")).resolves.toBe(true);
    await expect(memory.jsm.consumers.delete(events, "someone-else")).rejects.toThrow(
      /Permissions Violation/,
    );
    expect((await orchestrator.jsm.consumers.info(events, "someone-else")).name).toBe("someone-else");
    // The memory service serves memory, not sandbox calls.
    expect(await canSubscribe(memory, memory.subjects.svc("sandbox", "exec"))).toBe(false);
    expect(await canSubscribe(memory, memory.subjects.svc("memory", "search"))).toBe(true);
  });

  it("runs the whole platform on those credentials without one permission violation", {
    timeout: 240_000,
  }, async () => {
    const logBefore = server.log().length;
    const platform = await Platform.start({
      workers: 1,
      sandbox: true,
      env: { NATS_URL: server.url, WL_SUBJECT_PREFIX: "wl" },
      appEnv: Object.fromEntries(
        SERVICES.map((service) => [service, { NATS_USER: service, NATS_PASSWORD: passwords[service] }]),
      ),
    });
    const post = async (path: string, body?: unknown) => {
      const response = await platform.request("POST", path, body);
      expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
      return response.body;
    };
    try {
      // A sandbox tool (harness → runner service), an approval (gateway's wake job, worker's pull), an
      // interrupt (gateway → worker control), then the session is archived (orchestrator → runner release).
      const environment = await post("/v1/environments", { name: "nats-auth", config: { memory_mb: 256 } });
      const agent = await post("/v1/agents", {
        name: "nats-auth",
        model: platform.fakeModel(),
        tools: [{ type: "builtin", configs: [{ name: "set_state", permission_policy: "always_ask" }] }],
      });
      const id = (await post("/v1/sessions", { agent: agent.id, environment_id: environment.id }))
        .id as string;
      // A client reading the session's live deltas: the worker publishes them, the gateway forwards them.
      const live = new AbortController();
      const deltaTypes: string[] = [];
      const client = createClient({ baseUrl: platform.baseUrl, apiKey: platform.apiKey });
      const reading = (async () => {
        for await (const item of client.events.stream(id, { signal: live.signal, deltas: true }))
          if ("ephemeral" in item) deltaTypes.push(item.type);
      })().catch(() => undefined);
      platform.fake.enqueue(
        { toolCalls: [{ name: "write", input: { path: "note.txt", content: "hi\n" } }] },
        { toolCalls: [{ name: "set_state", input: { key: "k", value: 1 } }] },
        { text: "done" },
      );
      await post(`/v1/sessions/${id}/events`, { events: [say("note it")] });
      await platform.waitForIdle(id, "requires_action", 0, 90_000);
      const events = await platform.events(id);
      const write = events.find((event) => event.type === "agent.tool_use" && event.name === "write");
      expect(events.find((e) => e.type === "agent.tool_result" && e.tool_use_id === write?.id)).toMatchObject(
        {
          is_error: false,
        },
      );
      const ask = events.find((event) => event.type === "agent.tool_use" && event.name === "set_state");
      await post(`/v1/sessions/${id}/events`, {
        events: [{ type: "user.tool_confirmation", tool_use_id: ask?.id, result: "allow" }],
      });
      await platform.waitForIdle(id, "end_turn", 0, 60_000);

      platform.fake.enqueue({ text: "slow", delayMs: 60_000 });
      const posted = await post(`/v1/sessions/${id}/events`, { events: [say("again")] });
      const after = posted.events[0].seq as number;
      await platform.waitForEvent(
        id,
        (event) => event.type === "span.model_request_start" && event.seq > after,
      );
      await post(`/v1/sessions/${id}/events`, { events: [{ type: "user.interrupt" }] });
      await platform.waitForIdle(id, "end_turn", after, 60_000);

      live.abort();
      await reading;
      expect(deltaTypes).toContain("agent.tool_use_input_delta");
      expect(deltaTypes).toContain("agent.message_delta");

      await post(`/v1/sessions/${id}/archive`);
      await expect.poll(() => platform.sandboxContainers(id), { timeout: 60_000, interval: 250 }).toEqual([]);
    } finally {
      await platform.stop();
    }
    expect(server.log().slice(logBefore)).not.toMatch(/Violation/);
  });
});

const say = (text: string) => ({ type: "user.message", content: [{ type: "text", text }] });
