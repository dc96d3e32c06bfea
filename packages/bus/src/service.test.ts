import { headers as natsHeaders } from "@nats-io/transport-node";
import { context } from "@opentelemetry/api";
import { MAX_JSON_DEPTH, WakeloopError } from "@wakeloop/contracts";
import { testNatsUrl } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { closeTestBus, openTestBus } from "./bus-test-fixture";
import { type Bus, connectBus } from "./connect";
import { activeTraceId, fakeSpanContext, installTestPropagation } from "./otel-test-setup";
import { encodeJson } from "./publish";
import { defineService, type ServiceHandle } from "./service";
import { injectTraceContext } from "./trace-context";

const Calculator = defineService("calc", {
  add: {
    request: z.object({ a: z.number(), b: z.number() }),
    response: z.object({ sum: z.number(), instance: z.string() }),
  },
  fail: {
    request: z.object({ kind: z.enum(["wakeloop", "plain", "bad_response"]) }),
    response: z.object({ never: z.literal(true) }),
  },
  trace: { request: z.object({}), response: z.object({ traceId: z.string().optional() }) },
});

// A client that believes `add` takes strings: the server must refuse what it sends.
const LooseCalculator = defineService("calc", {
  add: { request: z.object({ a: z.string() }), response: z.unknown() },
});

let bus: Bus;
let second: Bus;
let services: ServiceHandle[];

function instance(target: Bus, name: string): ServiceHandle {
  return target.serve(Calculator, {
    add: async ({ a, b }) => ({ sum: a + b, instance: name }),
    fail: async ({ kind }) => {
      if (kind === "wakeloop") {
        throw new WakeloopError("sandbox_busy", "all containers are in use", {
          retryable: true,
          details: { pool: "default" },
        });
      }
      if (kind === "plain") throw new Error("disk full");
      return { never: false } as unknown as { never: true };
    },
    trace: async () => ({ traceId: activeTraceId() }),
  });
}

beforeAll(async () => {
  installTestPropagation();
  bus = await openTestBus();
  // A second process of the same deployment: same prefix, its own connection.
  second = await connectBus({ servers: testNatsUrl(), prefix: bus.subjects.prefix, name: "second" });
  services = [instance(bus, "one"), instance(second, "two")];
  await Promise.all([bus.nc.flush(), second.nc.flush()]);
});

afterAll(async () => {
  await Promise.all(services.map((service) => service.stop()));
  await second.close();
  await closeTestBus(bus);
});

describe("request/reply services", () => {
  it("answers typed requests and shares the work across a queue group", async () => {
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, n) =>
        bus.request(Calculator, "add", { a: n, b: 1 }, { timeoutMs: 5_000 }),
      ),
    );
    expect(replies.map((reply) => reply.sum)).toEqual(Array.from({ length: 40 }, (_, n) => n + 1));
    const counts = new Map<string, number>();
    for (const reply of replies) counts.set(reply.instance, (counts.get(reply.instance) ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual(["one", "two"]);
  });

  it("rethrows a service's WakeloopError with the same code, retryability and details", async () => {
    const error = await bus.request(Calculator, "fail", { kind: "wakeloop" }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(WakeloopError);
    expect(error).toMatchObject({
      code: "sandbox_busy",
      message: "all containers are in use",
      retryable: true,
      details: { pool: "default" },
    });
  });

  it("sends an unclassified failure as a retryable internal_error without a stack", async () => {
    const raw = await bus.nc.request(bus.subjects.svc("calc", "fail"), encodeJson({ kind: "plain" }));
    const reply = raw.json<{ ok: boolean; error: Record<string, unknown> }>();
    expect(reply).toEqual({
      ok: false,
      error: { code: "internal_error", message: "disk full", retryable: true },
    });
    await expect(bus.request(Calculator, "fail", { kind: "plain" })).rejects.toMatchObject({
      code: "internal_error",
    });
  });

  it("refuses a request or response that breaks the contract", async () => {
    await expect(bus.request(LooseCalculator, "add", { a: "1" })).rejects.toMatchObject({
      code: "bus_invalid_payload",
      retryable: false,
      details: { issues: expect.arrayContaining([expect.objectContaining({ path: ["a"] })]) },
    });
    await expect(bus.request(Calculator, "fail", { kind: "bad_response" })).rejects.toMatchObject({
      code: "bus_invalid_payload",
      message: "response does not match its schema",
    });
  });

  it("refuses a request nested past MAX_JSON_DEPTH before its schema or handler walks it", async () => {
    const deep = `{"a":${"[".repeat(10_000)}${"]".repeat(10_000)},"b":1}`;
    const answer = await bus.nc.request(bus.subjects.svc("calc", "add"), deep, { timeout: 5_000 });
    expect(answer.json()).toMatchObject({
      ok: false,
      error: { code: "bus_invalid_request", retryable: false },
    });
    expect(answer.string()).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
  });

  it("says when nobody serves the action", async () => {
    const Nobody = defineService("nobody", { ping: { request: z.object({}), response: z.object({}) } });
    await expect(bus.request(Nobody, "ping", {}, { timeoutMs: 1_000 })).rejects.toMatchObject({
      code: "bus_no_responders",
      retryable: true,
    });
  });

  it("carries the trace context to the handler and back in the reply headers", async () => {
    const { ctx, span } = fakeSpanContext();
    const reply = await context.with(ctx, () => bus.request(Calculator, "trace", {}));
    expect(reply.traceId).toBe(span.traceId);

    const headers = natsHeaders();
    injectTraceContext(headers, ctx);
    const raw = await bus.nc.request(bus.subjects.svc("calc", "trace"), encodeJson({}), {
      headers,
      timeout: 5_000,
    });
    expect(raw.headers?.get("traceparent")).toContain(span.traceId);
  });
});
