import { ApiError } from "@wakeloop/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayProcess, startGatewayProcess } from "./gateway-process";

// Issue #8 points 8 and 10 (SSE half): what one key or tenant may use on the gateway, and streams that
// end when their key is revoked. Each test has a tenant of its own, made with the operators' command,
// so one test's requests never count against another's limits.

const REQUESTS_PER_WINDOW = 30;
let gateway: GatewayProcess;

beforeAll(async () => {
  gateway = await startGatewayProcess({
    env: {
      GATEWAY_RATE_LIMIT_REQUESTS: String(REQUESTS_PER_WINDOW),
      GATEWAY_RATE_LIMIT_WINDOW_S: "600",
      GATEWAY_MAX_STREAMS_PER_KEY: "2",
      GATEWAY_MAX_OPEN_SESSIONS_PER_TENANT: "3",
      GATEWAY_DEFAULT_BUDGET_TOKENS: "10000",
      GATEWAY_MAX_BUDGET_TOKENS: "50000",
      GATEWAY_SSE_KEEPALIVE_MS: "1000",
    },
  });
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
});

interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read bodies of every shape
  body: any;
}

async function call(key: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${gateway.baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body !== undefined && { "content-type": "application/json" }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text === "" ? undefined : JSON.parse(text),
  };
}

function expectRefused(answer: Answer, status: number, type: string) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(ApiError.parse(answer.body).error.type).toBe(type);
  if (status === 429) expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
}

/** A tenant of the test's own with an agent, its owner key and a member key. */
async function tenant(name: string) {
  const { ownerKey } = await gateway.newTenant(name);
  const member = await call(ownerKey, "POST", "/v1/api_keys", { name: "member", role: "member" });
  expect(member.status).toBe(200);
  const agent = await call(ownerKey, "POST", "/v1/agents", {
    name: "limits",
    model: { provider: "openai_compatible", id: "m" },
  });
  expect(agent.status).toBe(200);
  return {
    ownerKey,
    memberKey: member.body.key as string,
    memberKeyId: member.body.id as string,
    agent: agent.body,
  };
}

async function newSession(key: string, agentId: string): Promise<string> {
  const created = await call(key, "POST", "/v1/sessions", { agent: agentId });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id as string;
}

function openStream(key: string, sessionId: string, signal: AbortSignal) {
  return fetch(`${gateway.baseUrl}/v1/sessions/${sessionId}/events/stream`, {
    headers: { authorization: `Bearer ${key}`, accept: "text/event-stream" },
    signal,
  });
}

/** Whether the server ends the stream within `ms` (reading and dropping what it sends until then). */
async function endsWithin(response: Response, ms: number): Promise<boolean> {
  const reader = response.body?.getReader();
  if (reader === undefined) return true;
  const timer = new Promise<"open">((resolve) => setTimeout(resolve, ms, "open"));
  const ended = (async () => {
    for (;;) if ((await reader.read()).done) return "ended" as const;
  })();
  const result = await Promise.race([ended, timer]);
  if (result === "open") await reader.cancel();
  return result === "ended";
}

describe("request rate per API key", () => {
  it("answers 429 with Retry-After past the limit, and only for that key", async () => {
    const { ownerKey, memberKey } = await tenant("rate");
    // tenant() made two requests with the owner key.
    for (let index = 2; index < REQUESTS_PER_WINDOW; index++) {
      expect((await call(ownerKey, "GET", "/v1/agents")).status).toBe(200);
    }
    expectRefused(await call(ownerKey, "GET", "/v1/agents"), 429, "rate_limit_error");
    expect((await call(memberKey, "GET", "/v1/agents")).status).toBe(200);
  });
});

describe("open sessions per tenant", () => {
  it("refuses a session past the limit, even when the creates race, and has room again after an archive", async () => {
    const { ownerKey, agent } = await tenant("sessions");
    const created = await Promise.all(
      Array.from({ length: 5 }, () => call(ownerKey, "POST", "/v1/sessions", { agent: agent.id })),
    );
    expect(created.map((answer) => answer.status).sort()).toEqual([200, 200, 200, 429, 429]);
    expectRefused(created.find((answer) => answer.status === 429) as Answer, 429, "rate_limit_error");
    const open = created.filter((answer) => answer.status === 200).map((answer) => answer.body.id as string);
    expect((await call(ownerKey, "POST", `/v1/sessions/${open[0]}/archive`)).status).toBe(200);
    expect((await call(ownerKey, "POST", "/v1/sessions", { agent: agent.id })).status).toBe(200);
  });
});

describe("token budgets", () => {
  it("gives an agent without a budget the operator default and refuses one above the cap", async () => {
    const { ownerKey, agent } = await tenant("budget-defaults");
    expect(agent.budget).toEqual({ max_total_tokens: 10_000 });
    const model = { provider: "openai_compatible", id: "m" };
    for (const budget of [{ max_total_tokens: 50_001 }, { max_total_tokens: null }]) {
      expectRefused(
        await call(ownerKey, "POST", "/v1/agents", { name: "big", model, budget }),
        400,
        "invalid_request_error",
      );
      expectRefused(
        await call(ownerKey, "POST", `/v1/agents/${agent.id}`, { budget }),
        400,
        "invalid_request_error",
      );
    }
    const sessionId = await newSession(ownerKey, agent.id);
    expectRefused(
      await call(ownerKey, "POST", `/v1/sessions/${sessionId}`, { budget: { max_total_tokens: null } }),
      400,
      "invalid_request_error",
    );
    const raised = await call(ownerKey, "POST", `/v1/sessions/${sessionId}`, {
      budget: { max_total_tokens: 50_000 },
    });
    expect(raised.status).toBe(200);
    expect(raised.body.budget).toEqual({ max_total_tokens: 50_000 });
  });

  it("lets only owners set or change a budget", async () => {
    const { memberKey, agent } = await tenant("budget-owners");
    const budget = { max_total_tokens: 20_000 };
    expectRefused(
      await call(memberKey, "POST", "/v1/sessions", { agent: agent.id, budget }),
      403,
      "permission_error",
    );
    const sessionId = await newSession(memberKey, agent.id);
    expectRefused(
      await call(memberKey, "POST", `/v1/sessions/${sessionId}`, { budget }),
      403,
      "permission_error",
    );
    const session = await call(memberKey, "GET", `/v1/sessions/${sessionId}`);
    expect(session.body.budget).toEqual({ max_total_tokens: 10_000 });
    // Members still change what is theirs to change.
    expect((await call(memberKey, "POST", `/v1/sessions/${sessionId}`, { title: "renamed" })).status).toBe(
      200,
    );
  });
});

describe("event streams", () => {
  it("refuses a key's stream past the limit until one of its streams ends", async () => {
    const { memberKey, agent } = await tenant("streams");
    const sessionId = await newSession(memberKey, agent.id);
    const first = new AbortController();
    const second = new AbortController();
    try {
      expect((await openStream(memberKey, sessionId, first.signal)).status).toBe(200);
      expect((await openStream(memberKey, sessionId, second.signal)).status).toBe(200);
      const third = await openStream(memberKey, sessionId, AbortSignal.timeout(30_000));
      expectRefused(
        { status: third.status, headers: third.headers, body: await third.json() },
        429,
        "rate_limit_error",
      );
      first.abort();
      await expect
        .poll(
          async () => {
            const again = await openStream(memberKey, sessionId, second.signal);
            return again.status;
          },
          { timeout: 10_000 },
        )
        .toBe(200);
    } finally {
      first.abort();
      second.abort();
    }
  });

  it("end when their key is revoked", async () => {
    const { ownerKey, memberKey, memberKeyId, agent } = await tenant("revoked");
    const sessionId = await newSession(ownerKey, agent.id);
    const stream = await openStream(memberKey, sessionId, AbortSignal.timeout(60_000));
    expect(stream.status).toBe(200);
    expect((await call(ownerKey, "DELETE", `/v1/api_keys/${memberKeyId}`)).status).toBe(200);
    // Keep-alives come every second; the stream ends at the first one after the revocation.
    expect(await endsWithin(stream, 15_000)).toBe(true);
    expectRefused(await call(memberKey, "GET", `/v1/sessions/${sessionId}`), 401, "authentication_error");
  }, 60_000);
});
