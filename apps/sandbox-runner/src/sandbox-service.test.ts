import { type Bus, connectBus } from "@wakeloop/bus";
import { SandboxStatusNotice } from "@wakeloop/contracts";
import { createSandboxClient, sandboxStatusSubject } from "@wakeloop/sandbox-client";
import { testNatsUrl, testPrefix } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunnerLog } from "./runner-log";
import { type SandboxRunner, startSandboxService } from "./sandbox-service";
import { RunnerFixture, testEnvironment, testRunnerSettings } from "./testing/docker-fixture";

// The runner on a real NATS: the harness-side client ensures, executes (pinned to the runner),
// interrupts through an AbortSignal, hears status notices, and releases.

const silent = { debug() {}, info() {}, warn() {}, error() {} } as unknown as RunnerLog;
let fixture: RunnerFixture;
let bus: Bus;
let runner: SandboxRunner;

beforeAll(async () => {
  fixture = await RunnerFixture.create();
  bus = await connectBus({ servers: testNatsUrl(), prefix: testPrefix(), name: "sandbox-service-test" });
  runner = await startSandboxService({
    bus,
    docker: fixture.docker,
    runnerId: fixture.runnerId,
    stateDir: fixture.stateDir,
    idleStopMs: 600_000,
    log: silent,
    ...testRunnerSettings(),
  });
});

afterAll(async () => {
  await runner?.stop();
  await bus?.close();
  await fixture?.cleanup();
});

describe("sandbox service over NATS", () => {
  it("ensure, execute, interrupt, status notices and release", async () => {
    const sessionId = "sesn_bus_1";
    const notices: SandboxStatusNotice[] = [];
    const subscription = bus.nc.subscribe(sandboxStatusSubject(bus.subjects.prefix, sessionId), {
      callback: (_error, msg) => {
        notices.push(SandboxStatusNotice.parse(msg.json()));
      },
    });
    const client = createSandboxClient(bus);

    const ensured = await client.ensureSandbox({
      tenantId: "tnt_bus",
      sessionId,
      environment: testEnvironment(),
    });
    expect(ensured).toMatchObject({ runner_id: fixture.runnerId, status: "ready", provisioning: "cold" });

    const executed = await client.execute({
      tenantId: "tnt_bus",
      sessionId,
      toolCallId: "tcall_bus_1",
      tool: "shell_run",
      input: { command: "echo over-the-bus" },
      approved: true,
    });
    expect(executed).toMatchObject({ outcome: "completed", is_error: false });
    expect(JSON.stringify(executed)).toContain("over-the-bus");

    const controller = new AbortController();
    const long = client.execute({
      tenantId: "tnt_bus",
      sessionId,
      toolCallId: "tcall_bus_2",
      tool: "shell_run",
      input: { command: "sleep 60" },
      approved: true,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 300);
    const interrupted = await long;
    expect(JSON.stringify(interrupted)).toContain("interrupted");

    expect((await client.describe(sessionId)).status).toBe("ready");
    expect(await client.release(sessionId, "tnt_bus")).toEqual({ released: true });
    await bus.nc.flush();
    expect(notices.map((n) => n.status)).toEqual(["provisioning", "ready", "closed"]);
    subscription.unsubscribe();
  });

  it("answers a call for an unknown session with a clear error", async () => {
    const client = createSandboxClient(bus);
    await expect(
      client.execute({
        tenantId: "tnt_bus",
        sessionId: "sesn_unknown",
        toolCallId: "tcall_x",
        tool: "ls",
        input: {},
      }),
    ).rejects.toMatchObject({ code: "sandbox_not_found" });
  });
});
