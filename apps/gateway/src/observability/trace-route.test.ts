import { randomBytes } from "node:crypto";
import { Agent, Session, TraceResponse } from "@wakeloop/contracts";
import { type NewSpan, openWake } from "@wakeloop/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentBody, type GatewayFixture, startGateway } from "../testing/gateway-fixture";

let gw: GatewayFixture;
let key: string;

beforeAll(async () => {
  gw = await startGateway();
  key = gw.tenant.ownerKey;
});
afterAll(async () => {
  await gw?.close();
});

async function newSession(): Promise<string> {
  const agent = Agent.parse((await gw.request("POST", "/v1/agents", { key, body: agentBody() })).body);
  return Session.parse((await gw.request("POST", "/v1/sessions", { key, body: { agent: agent.id } })).body)
    .id;
}

/** A wake with one trace: invoke_agent → chat, plus a sandbox span (no tenant, as the runner writes it). */
async function wakeWithTrace(sessionId: string, at: Date) {
  const wake = await openWake(gw.db, { tenantId: gw.tenant.id, sessionId, reason: "user_message" });
  if (wake === null) throw new Error("the session already has an open wake");
  await gw.db.updateTable("wakes").set({ status: "completed" }).where("id", "=", wake.id).execute();
  const traceId = randomBytes(16).toString("hex");
  const span = (
    name: string,
    spanId: string,
    parent: string | null,
    offsetMs: number,
    tenant = true,
  ): NewSpan => ({
    trace_id: traceId,
    span_id: spanId,
    parent_span_id: parent,
    tenant_id: tenant ? gw.tenant.id : null,
    session_id: tenant ? sessionId : null,
    wake_id: tenant ? wake.id : null,
    name,
    kind: "internal",
    service_name: tenant ? "harness-worker" : "sandbox-runner",
    start_time: new Date(at.getTime() + offsetMs),
    end_time: new Date(at.getTime() + offsetMs + 50),
    status_code: "ok",
    status_message: null,
    attributes: JSON.stringify({ "gen_ai.operation.name": name }),
    events: "[]",
  });
  await gw.db
    .insertInto("spans")
    .values([
      span("invoke_agent support", "a000000000000001", null, 0),
      span("chat claude-test", "a000000000000002", "a000000000000001", 10),
      span("sandbox.execute", "a000000000000003", "a000000000000001", 20, false),
    ])
    .execute();
  return wake.id;
}

describe("GET /v1/sessions/{id}/trace", () => {
  it("returns each wake's span tree, oldest wake first, including other services' spans", async () => {
    const sessionId = await newSession();
    const first = await wakeWithTrace(sessionId, new Date("2025-01-01T10:00:00Z"));
    const second = await wakeWithTrace(sessionId, new Date("2025-01-01T11:00:00Z"));

    const response = await gw.request("GET", `/v1/sessions/${sessionId}/trace`, { key });
    expect(response.status).toBe(200);
    const { data } = TraceResponse.parse(response.body);
    expect(data.map((entry) => entry.wake_id)).toEqual([first, second]);
    const [root] = data[0]?.spans ?? [];
    expect(root).toMatchObject({ name: "invoke_agent support", parent_span_id: null, duration_ms: 50 });
    expect(root?.children.map((child) => [child.name, child.service_name])).toEqual([
      ["chat claude-test", "harness-worker"],
      ["sandbox.execute", "sandbox-runner"],
    ]);

    const one = TraceResponse.parse(
      (await gw.request("GET", `/v1/sessions/${sessionId}/trace?wake_id=${second}`, { key })).body,
    );
    expect(one.data.map((entry) => entry.wake_id)).toEqual([second]);
  });

  it("answers 404 for a wake of another session", async () => {
    const sessionId = await newSession();
    const otherWake = await wakeWithTrace(await newSession(), new Date());
    const response = await gw.request("GET", `/v1/sessions/${sessionId}/trace?wake_id=${otherWake}`, { key });
    expect(response.status).toBe(404);
  });

  it("is empty for a session that never woke", async () => {
    const response = await gw.request("GET", `/v1/sessions/${await newSession()}/trace`, { key });
    expect(TraceResponse.parse(response.body)).toEqual({ data: [] });
  });
});
