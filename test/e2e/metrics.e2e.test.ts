import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parser } from "@prometheus-io/lezer-promql";
import type { SessionEvent } from "@wakeloop/contracts";
import { Platform, type PromScrape } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Metrics through real services: a wake driven through the public API (the sandbox-runner with real
// Docker containers, two harness workers, the fake model), then each service's GET /metrics scraped
// and read as Prometheus reads it. The tests share one platform and run in order: the first one's
// counts are exact because nothing ran before it.

let platform: Platform;
const WORKERS = ["worker-1", "worker-2"];
const SERVICES = ["gateway", "orchestrator", ...WORKERS, "sandbox-runner", "memory-retrieval"];
const DASHBOARD = join(import.meta.dirname, "..", "..", "infra", "grafana", "dashboards", "wakeloop.json");

beforeAll(async () => {
  platform = await Platform.start({
    workers: 2,
    sandbox: true,
    env: { LEASE_SWEEP_INTERVAL_MS: "200", WAKE_REPUBLISH_AFTER_MS: "2000" },
    workerEnv: { LEASE_TTL_MS: "1500" },
  });
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

async function create(path: string, body: Record<string, unknown>): Promise<string> {
  const created = await platform.request("POST", path, body);
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id as string;
}

async function send(sessionId: string, text: string): Promise<void> {
  const response = await platform.request("POST", `/v1/sessions/${sessionId}/events`, {
    events: [{ type: "user.message", content: [{ type: "text", text }] }],
  });
  expect(response.status, JSON.stringify(response.body)).toBe(202);
}

/** A session of an agent on the fake model whose sandbox file tools run without confirmation. */
async function sandboxSession(): Promise<string> {
  const environment = await create("/v1/environments", {
    name: "metrics",
    config: { memory_mb: 256, pids_limit: 128, warm_pool_size: 1 },
  });
  const agent = await create("/v1/agents", {
    name: "metrics",
    model: platform.fakeModel(),
    tools: [
      {
        type: "builtin",
        configs: ["write", "read"].map((name) => ({ name, permission_policy: "always_allow" })),
      },
    ],
  });
  return create("/v1/sessions", { agent, environment_id: environment });
}

interface DashboardPanel {
  title: string;
  targets?: { expr: string }[];
  panels?: DashboardPanel[];
}

/** Every PromQL query of the dashboard, with the panel it belongs to. */
async function dashboardQueries(): Promise<{ panel: string; expr: string }[]> {
  const dashboard = JSON.parse(await readFile(DASHBOARD, "utf8")) as { panels: DashboardPanel[] };
  const walk = (panels: DashboardPanel[]): { panel: string; expr: string }[] =>
    panels.flatMap((panel) => [
      ...(panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })),
      ...walk(panel.panels ?? []),
    ]);
  return walk(dashboard.panels);
}

/**
 * The metric names a query selects, read with Prometheus' own PromQL grammar; a query that does not
 * parse is an error. Grafana's `$__rate_interval` is a duration by the time Prometheus sees it.
 */
function selectedMetrics(expr: string): string[] {
  const promql = expr.replaceAll("$__rate_interval", "5m");
  const names: string[] = [];
  parser.parse(promql).iterate({
    enter(node) {
      if (node.type.isError) throw new Error(`not PromQL at ${node.from}: ${expr}`);
      if (node.name === "VectorSelector") {
        const identifier = node.node.getChild("Identifier");
        if (identifier !== null) names.push(promql.slice(identifier.from, identifier.to));
      }
    },
  });
  return names;
}

/** The value of `name` summed over the harness workers running now. */
async function overWorkers(name: string, labels: Record<string, string>): Promise<number> {
  const scrapes = await Promise.all(WORKERS.map((worker) => platform.metrics(worker)));
  return scrapes.reduce((total, scrape) => total + scrape.value(name, labels), 0);
}

const model = {
  gen_ai_operation_name: "chat",
  gen_ai_provider_name: "openai",
  gen_ai_system: "openai",
  gen_ai_request_model: "fake-gpt",
};

describe("metrics of a wake", () => {
  it("count the wake, its model requests, tokens and tool calls with bounded labels", async () => {
    const id = await sandboxSession();
    platform.fake.enqueue(
      {
        toolCalls: [{ name: "write", input: { path: "note.txt", content: "hello\n" } }],
        usage: { input_tokens: 10, output_tokens: 3 },
      },
      {
        toolCalls: [{ name: "read", input: { path: "missing.txt" } }],
        usage: { input_tokens: 20, output_tokens: 4 },
      },
      { text: "Done.", usage: { input_tokens: 30, output_tokens: 5 } },
    );
    await send(id, "write a note, then read another");
    await platform.waitForIdle(id, "end_turn", 0, 60_000);
    const events = await platform.events(id);
    const readResult = events.find(
      (event): event is Extract<SessionEvent, { type: "agent.tool_result" }> =>
        event.type === "agent.tool_result" && event.is_error,
    );
    expect(readResult, "reading a missing file is an error result").toBeDefined();

    const [worker] = (
      await Promise.all(WORKERS.map(async (name) => ({ name, scrape: await platform.metrics(name) })))
    ).filter(({ scrape }) => scrape.value("wakeloop_wakes_started_total") > 0);
    expect(worker, "one worker ran the wake").toBeDefined();
    const scrape = worker?.scrape as PromScrape;

    expect(scrape.value("wakeloop_wakes_started_total")).toBe(1);
    expect(scrape.find("wakeloop_wakes_finished_total")).toEqual([
      { name: "wakeloop_wakes_finished_total", labels: { wakeloop_stop_reason: "end_turn" }, value: 1 },
    ]);
    expect(scrape.value("wakeloop_wake_duration_count", { wakeloop_stop_reason: "end_turn" })).toBe(1);

    // GenAI semantic conventions: one duration sample per request, tokens by type.
    expect(scrape.value("gen_ai_client_operation_duration_count", model)).toBe(3);
    expect(scrape.find("gen_ai_client_operation_duration_bucket", { ...model, le: "81.92" })).toHaveLength(1);
    expect(scrape.value("gen_ai_client_token_usage_sum", { ...model, gen_ai_token_type: "input" })).toBe(60);
    expect(scrape.value("gen_ai_client_token_usage_sum", { ...model, gen_ai_token_type: "output" })).toBe(12);
    expect(scrape.value("gen_ai_client_token_usage_count", { ...model, gen_ai_token_type: "input" })).toBe(3);

    // Tool latency by tool; the failed read is an error by tool and type, the write is not.
    expect(scrape.find("wakeloop_tool_duration_count", { gen_ai_tool_name: "write" })).toEqual([
      { name: "wakeloop_tool_duration_count", labels: { gen_ai_tool_name: "write" }, value: 1 },
    ]);
    expect(
      scrape.value("wakeloop_tool_duration_count", { gen_ai_tool_name: "read", error_type: "tool_error" }),
    ).toBe(1);
    expect(scrape.find("wakeloop_tool_errors_total")).toEqual([
      {
        name: "wakeloop_tool_errors_total",
        labels: { gen_ai_tool_name: "read", error_type: "tool_error" },
        value: 1,
      },
    ]);

    // Ids are in traces and logs, never labels: no series per session.
    expect(scrape.text).not.toContain(id);
    expect(scrape.text).not.toContain(platform.tenantId);
    expect(scrape.text).toMatch(/^target_info\{.*service_name="harness-worker"/m);

    // The orchestrator: every committed event went through the outbox relay; the queue is empty again.
    const orchestrator = await platform.metrics("orchestrator");
    expect(orchestrator.value("wakeloop_outbox_relay_lag_count")).toBeGreaterThanOrEqual(events.length);
    expect(orchestrator.value("wakeloop_outbox_relay_rounds_total")).toBeGreaterThan(0);
    expect(orchestrator.value("wakeloop_wake_queue_depth")).toBe(0);
    expect(orchestrator.value("wakeloop_wake_queue_in_progress")).toBe(0);
    expect(orchestrator.find("wakeloop_wake_queue_oldest_age")).toHaveLength(1);
    expect(orchestrator.value("wakeloop_wake_queue_oldest_age")).toBe(0);

    // The gateway: request durations by method, route template and status, never by id.
    const gateway = await platform.metrics("gateway");
    const postEvents = {
      http_request_method: "POST",
      http_route: "/v1/sessions/:id/events",
      http_response_status_code: "202",
    };
    expect(gateway.value("http_server_request_duration_count", postEvents)).toBe(1);
    expect(gateway.text).not.toContain(id);

    // The runner holds the session's sandbox and refills the environment's warm pool to its size.
    await expect
      .poll(async () => (await platform.metrics("sandbox-runner")).value("wakeloop_sandbox_pool_size"), {
        timeout: 30_000,
      })
      .toBe(1);
    expect((await platform.metrics("sandbox-runner")).value("wakeloop_sandbox_active")).toBe(1);
  });

  it("count an expired lease and the rescheduled wake that finishes on the other worker", async () => {
    platform.fake.enqueue({ text: "slow answer", delayMs: 4_000 }, { text: "Recovered answer." });
    const agent = await create("/v1/agents", { name: "metrics", model: platform.fakeModel() });
    const id = await create("/v1/sessions", { agent });
    const endTurn = { wakeloop_stop_reason: "end_turn" };
    const finishedBefore = new Map<string, number>();
    for (const name of WORKERS)
      finishedBefore.set(
        name,
        (await platform.metrics(name)).value("wakeloop_wakes_finished_total", endTurn),
      );
    const requestsBefore = platform.fake.requests.length;
    await send(id, "survive this");
    // Killed only once its request reached the model: killed before, the rescheduled wake would take
    // the slow answer and leave the next test's script behind.
    await expect.poll(() => platform.fake.requests.length, { timeout: 10_000 }).toBe(requestsBefore + 1);
    const worker = await platform.wakeWorker(id);
    const victim = platform.app(worker);
    const survivor = WORKERS.find((name) => name !== worker) ?? "";
    victim.kill("SIGKILL");
    await victim.exited;
    await platform.waitForIdle(id, "end_turn", 0, 30_000);

    const orchestrator = await platform.metrics("orchestrator");
    expect(orchestrator.find("wakeloop_lease_expiries_total")).toEqual([
      {
        name: "wakeloop_lease_expiries_total",
        labels: { wakeloop_lease_outcome: "rescheduled" },
        value: 1,
      },
    ]);
    // The killed worker's counts went with it; the survivor finished the rescheduled wake.
    const survived = await platform.metrics(survivor);
    expect(survived.value("wakeloop_wakes_finished_total", endTurn)).toBe(
      (finishedBefore.get(survivor) ?? 0) + 1,
    );
    expect(survived.value("gen_ai_client_operation_duration_count", model)).toBeGreaterThanOrEqual(1);
    await platform.startWorker(worker);
  });

  it("count a failed model request by its error type, apart from the retry that succeeded", async () => {
    platform.fake.enqueue(
      { error: { status: 529, type: "overloaded_error", message: "busy" } },
      { text: "Back again." },
    );
    const agent = await create("/v1/agents", { name: "metrics", model: platform.fakeModel("anthropic") });
    const id = await create("/v1/sessions", { agent });
    await send(id, "hello?");
    await platform.waitForIdle(id, "end_turn", 0, 30_000);

    const claude = { gen_ai_provider_name: "anthropic", gen_ai_request_model: "fake-claude" };
    const failed = { ...claude, error_type: "model_overloaded" };
    expect(await overWorkers("gen_ai_client_operation_duration_count", failed)).toBe(1);
    expect(await overWorkers("gen_ai_client_operation_duration_count", claude)).toBe(2);
    // Tokens are counted for the request that answered only.
    expect(
      await overWorkers("gen_ai_client_token_usage_count", { ...claude, gen_ai_token_type: "input" }),
    ).toBe(1);
  });

  // Last, so every metric the dashboard draws has been recorded by the wakes above.
  it("draw the dashboard only from metrics the services export", async () => {
    const exported = new Set<string>();
    for (const service of SERVICES)
      for (const sample of (await platform.metrics(service)).samples) exported.add(sample.name);

    const queries = await dashboardQueries();
    expect(queries.length).toBeGreaterThan(10);
    const missing = queries.flatMap(({ panel, expr }) =>
      selectedMetrics(expr)
        .filter((name) => !exported.has(name))
        .map((name) => `${panel}: ${name}`),
    );
    expect(missing).toEqual([]);
    // Each query selects something: a typo in a function name would otherwise select nothing.
    for (const { expr } of queries) expect(selectedMetrics(expr).length, expr).toBeGreaterThan(0);
  });
});
