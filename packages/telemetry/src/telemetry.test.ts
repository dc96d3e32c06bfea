import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { setTimeout } from "node:timers/promises";
import { SpanStatusCode } from "@opentelemetry/api";
import { createTestDatabase, type TestDatabase } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_WAKELOOP_SESSION_ID,
  ATTR_WAKELOOP_TENANT_ID,
  ATTR_WAKELOOP_WAKE_ID,
} from "./attributes";
import { createLogger, withWakeIds } from "./logger";
import { ATTR_WAKELOOP_LEASE_OUTCOME, GEN_AI_DURATION_BUCKETS_S, MetricName } from "./metric-names";
import { readTrace } from "./read-trace";
import { startTelemetry, type Telemetry } from "./start-telemetry";

let testDb: TestDatabase;
let telemetry: Telemetry;
/** Stands in for an OTLP/HTTP collector (Jaeger, an OTel collector): records what it is sent. */
let collector: Server;
const collected: { path: string; body: string }[] = [];
/** A configured secret, as a provider key or a password would be. */
const SECRET = "configured-secret-0123";

beforeAll(async () => {
  collector = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on("end", () => {
      collected.push({ path: request.url ?? "", body });
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve));
  const { port } = collector.address() as AddressInfo;
  testDb = await createTestDatabase();
  telemetry = startTelemetry({
    serviceName: "telemetry-test",
    db: testDb.db,
    otlpEndpoint: `http://127.0.0.1:${port}/`,
    secrets: [SECRET],
  });
});

afterAll(async () => {
  await telemetry?.shutdown();
  await testDb?.drop();
  collector?.close();
});

/** A tiny traced "wake": a root span with a chat child and a failing tool child. */
async function tracedWake(ids: { tenant: string; session: string; wake: string }) {
  const { tracer } = telemetry;
  return tracer.startActiveSpan(
    "invoke_agent helper",
    {
      attributes: {
        [ATTR_WAKELOOP_TENANT_ID]: ids.tenant,
        [ATTR_GEN_AI_CONVERSATION_ID]: ids.session,
        [ATTR_WAKELOOP_WAKE_ID]: ids.wake,
        [ATTR_GEN_AI_OPERATION_NAME]: "invoke_agent",
      },
    },
    async (root) => {
      await tracer.startActiveSpan("chat fake-model", async (chat) => {
        chat.addEvent("first_token", { position: 0 });
        chat.end();
      });
      // Span start times have millisecond resolution; a real model call takes far longer than this.
      await setTimeout(2);
      await tracer.startActiveSpan(
        "execute_tool bash",
        { attributes: { [ATTR_WAKELOOP_SESSION_ID]: ids.session, [ATTR_GEN_AI_TOOL_NAME]: "bash" } },
        async (tool) => {
          tool.setStatus({ code: SpanStatusCode.ERROR, message: "exit code 2" });
          tool.end();
        },
      );
      root.end();
      return root.spanContext().traceId;
    },
  );
}

describe("spans persisted to Postgres", () => {
  it("stores every span with its parent link, ids, kind and status", async () => {
    const traceId = await tracedWake({ tenant: "ten_a", session: "ses_1", wake: "wak_1" });
    await telemetry.flush();

    const rows = await testDb.db.selectFrom("spans").selectAll().where("trace_id", "=", traceId).execute();
    const byName = new Map(rows.map((row) => [row.name, row]));
    expect([...byName.keys()].sort()).toEqual([
      "chat fake-model",
      "execute_tool bash",
      "invoke_agent helper",
    ]);
    const root = byName.get("invoke_agent helper");
    const chat = byName.get("chat fake-model");
    const tool = byName.get("execute_tool bash");
    expect(root).toMatchObject({
      parent_span_id: null,
      tenant_id: "ten_a",
      session_id: "ses_1",
      wake_id: "wak_1",
      kind: "internal",
      service_name: "telemetry-test",
      status_code: "unset",
    });
    expect(root?.attributes).toMatchObject({ [ATTR_GEN_AI_OPERATION_NAME]: "invoke_agent" });
    expect(chat).toMatchObject({ parent_span_id: root?.span_id, session_id: "ses_1", tenant_id: "ten_a" });
    expect(chat?.events).toEqual([
      { name: "first_token", time: expect.any(String), attributes: { position: 0 } },
    ]);
    // The session id also comes from `wakeloop.session.id` when no GenAI conversation id is set; the
    // tenant and wake ids the span lacks come from its parent (SessionAttributionProcessor).
    expect(tool).toMatchObject({
      parent_span_id: root?.span_id,
      session_id: "ses_1",
      tenant_id: "ten_a",
      wake_id: "wak_1",
      status_code: "error",
      status_message: "exit code 2",
    });
    // The root lasted at least the 2 ms pause between its children.
    expect((root?.end_time.getTime() ?? 0) - (root?.start_time.getTime() ?? 0)).toBeGreaterThanOrEqual(2);
  });

  it("reads a wake's trace back as a tree, only for its tenant", async () => {
    const traceId = await tracedWake({ tenant: "ten_b", session: "ses_2", wake: "wak_2" });
    await tracedWake({ tenant: "ten_b", session: "ses_3", wake: "wak_3" });
    await telemetry.flush();

    const byWake = await readTrace(testDb.db, { tenantId: "ten_b", wakeId: "wak_2" });
    expect(byWake).toHaveLength(1);
    const [root] = byWake;
    expect(root).toMatchObject({ traceId, name: "invoke_agent helper", wakeId: "wak_2", parentSpanId: null });
    expect(root?.children.map((child) => child.name)).toEqual(["chat fake-model", "execute_tool bash"]);
    expect(root?.children[1]?.status).toEqual({ code: "error", message: "exit code 2" });
    expect(root?.durationMs).toBeGreaterThanOrEqual(0);

    expect(await readTrace(testDb.db, { tenantId: "ten_b", traceId })).toEqual(byWake);
    expect(await readTrace(testDb.db, { tenantId: "ten_a", traceId })).toEqual([]);
    expect(await readTrace(testDb.db, { tenantId: "ten_b", wakeId: "wak_missing" })).toEqual([]);
  });
});

describe("secrets in spans", () => {
  it("are scrubbed from status messages, attributes and events before any exporter sees them", async () => {
    const traceId = telemetry.tracer.startActiveSpan(
      "chat leaky-provider",
      { attributes: { [ATTR_WAKELOOP_TENANT_ID]: "ten_s", "error.body": `echo: ${SECRET}` } },
      (span) => {
        span.recordException(new Error(`upstream said Authorization: Bearer ${SECRET}`));
        span.setStatus({ code: SpanStatusCode.ERROR, message: `failed with ${SECRET}` });
        span.end();
        return span.spanContext().traceId;
      },
    );
    await telemetry.flush();

    const [row] = await testDb.db.selectFrom("spans").selectAll().where("trace_id", "=", traceId).execute();
    expect(row?.status_message).toBe("failed with [redacted]");
    expect(row?.attributes).toMatchObject({ "error.body": "echo: [redacted]" });
    expect(JSON.stringify(row?.events)).toContain("Bearer [redacted]");
    const sent = collected.filter((request) => request.body.includes(traceId));
    expect(sent).toHaveLength(1);
    expect(sent[0]?.body).toContain("[redacted]");
    for (const text of [JSON.stringify(row), ...sent.map((request) => request.body)]) {
      expect(text).not.toContain(SECRET);
    }
  });
});

describe("OTLP export", () => {
  it("also sends spans to the OTLP endpoint's /v1/traces", async () => {
    const traceId = await tracedWake({ tenant: "ten_c", session: "ses_4", wake: "wak_4" });
    await telemetry.flush();

    const sent = collected.filter((request) => request.body.includes(traceId));
    expect(sent.map((request) => request.path)).toEqual(["/v1/traces"]);
    expect(sent[0]?.body).toContain("execute_tool bash");
  });
});

describe("logger", () => {
  function capture(secrets: string[] = []) {
    const records: Record<string, unknown>[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        records.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    return {
      records,
      log: createLogger({ service: "telemetry-test", level: "debug", destination, secrets }),
    };
  }

  it("stamps records with the active span's trace and span ids and the wake's ids", async () => {
    const { records, log } = capture();
    const wakeLog = withWakeIds(log, { sessionId: "ses_9", wakeId: "wak_9" });

    wakeLog.info("outside any span");
    const ids = telemetry.tracer.startActiveSpan("outer", (span) => {
      wakeLog.info("inside a span");
      span.end();
      return span.spanContext();
    });
    await new Promise((resolve) => setImmediate(resolve));

    expect(records).toHaveLength(2);
    const [outside, inside] = records;
    expect(outside).toMatchObject({
      service: "telemetry-test",
      level: "info",
      session_id: "ses_9",
      wake_id: "wak_9",
    });
    expect(outside).not.toHaveProperty("trace_id");
    expect(inside).toMatchObject({
      msg: "inside a span",
      trace_id: ids.traceId,
      span_id: ids.spanId,
      session_id: "ses_9",
      wake_id: "wak_9",
    });
  });

  it("never writes configured secrets, API keys or credential fields", () => {
    const { records, log } = capture([SECRET]);
    const apiKey = `wl_${"k".repeat(43)}`;

    log.info({ headers: { authorization: `Bearer ${apiKey}` }, apiKey: "field-value" }, "request");
    log.error({ err: new Error(`provider echoed ${SECRET}`) }, `rejected key ${apiKey}`);

    const written = JSON.stringify(records);
    expect(written).not.toContain(SECRET);
    expect(written).not.toContain(apiKey);
    expect(written).not.toContain("field-value");
    expect(records[0]).toMatchObject({ headers: { authorization: "[redacted]" }, apiKey: "[redacted]" });
    expect(records[1]).toMatchObject({ msg: "rejected key [redacted]" });
    expect(JSON.stringify(records[1]?.err)).toContain("provider echoed [redacted]");
  });
});

describe("metrics", () => {
  it("serves instruments on GET /metrics in the Prometheus format, with the advised buckets", async () => {
    const server = await telemetry.serveMetrics({ port: 0, host: "127.0.0.1" });
    const duration = telemetry.meter.createHistogram(MetricName.genAiOperationDuration, {
      unit: "s",
      advice: { explicitBucketBoundaries: GEN_AI_DURATION_BUCKETS_S },
    });
    const started = telemetry.meter.createCounter(MetricName.wakesStarted);
    duration.record(0.3, { [ATTR_GEN_AI_PROVIDER_NAME]: "openai", [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-x" });
    started.add(2);

    const response = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain("# TYPE gen_ai_client_operation_duration histogram");
    expect(text).toContain(
      'gen_ai_client_operation_duration_bucket{gen_ai_provider_name="openai",gen_ai_request_model="gpt-x",le="0.32"} 1',
    );
    expect(text).toMatch(/^wakeloop_wakes_started_total 2$/m);
    // The resource names the service, so one Prometheus tells the services apart.
    expect(text).toMatch(/^target_info\{.*service_name="telemetry-test"/m);
    expect((await fetch(`http://127.0.0.1:${server.port}/other`)).status).toBe(404);
  });

  it("pushes metrics to the OTLP endpoint's /v1/metrics", async () => {
    telemetry.meter
      .createCounter(MetricName.leaseExpiries)
      .add(1, { [ATTR_WAKELOOP_LEASE_OUTCOME]: "rescheduled" });
    await telemetry.flush();

    const sent = collected.filter((request) => request.path === "/v1/metrics");
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.some((request) => request.body.includes(MetricName.leaseExpiries))).toBe(true);
  });
});
