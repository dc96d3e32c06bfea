import { ApiError, MAX_JSON_DEPTH } from "@wakeloop/contracts";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayProcess, startGatewayProcess } from "./gateway-process";

// Issue #30 point 5: bad input never reaches a 500. JSON nested ten thousand levels deep (20 kB) made
// every body-taking route answer 500 (the well-formed text check ran out of stack); now any body past
// MAX_JSON_DEPTH is a 400 naming the limit, before anything walks it. The fuzz half posts random JSON,
// deep or not, in the places bodies hold JSON, and wants a 4xx or a success, never a 5xx.

let gateway: GatewayProcess;
let agentId: string;
let sessionId: string;

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read bodies of every shape
  body: any;
}

async function post(path: string, body: string): Promise<Answer> {
  const response = await fetch(`${gateway.baseUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${gateway.ownerKey}`, "content-type": "application/json" },
    body,
  });
  const text = await response.text();
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) };
}

async function get(path: string): Promise<Answer> {
  const response = await fetch(`${gateway.baseUrl}${path}`, {
    headers: { authorization: `Bearer ${gateway.ownerKey}` },
  });
  return { status: response.status, body: await response.json() };
}

const agentBody = { name: "deep", model: { provider: "anthropic", id: "claude-test" } };

beforeAll(async () => {
  gateway = await startGatewayProcess();
  const agent = await post("/v1/agents", JSON.stringify(agentBody));
  expect(agent.status, JSON.stringify(agent.body)).toBe(200);
  agentId = agent.body.id;
  const session = await post("/v1/sessions", JSON.stringify({ agent: agentId }));
  expect(session.status, JSON.stringify(session.body)).toBe(200);
  sessionId = session.body.id;
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
});

const arrays = (levels: number) => "[".repeat(levels) + "]".repeat(levels);
const objects = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;

/** An agent whose custom tool's input schema holds `inner`: a field that takes any JSON. */
const agentWith = (inner: string) =>
  `{"name":"deep","model":{"provider":"anthropic","id":"m"},"tools":[{"type":"custom","name":"t","description":"d","input_schema":{"type":"object","x-data":${inner}}}]}`;

/** Each body-taking route with a body that is valid but for `inner` in a field that takes any JSON. */
const routes = () =>
  [
    ["/v1/agents", agentWith],
    ["/v1/sessions", (inner: string) => `{"agent":"${agentId}","metadata":{"k":${inner}}}`],
    [
      `/v1/sessions/${sessionId}/events`,
      (inner: string) =>
        `{"events":[{"type":"user.message","content":[{"type":"text","text":"hi"}],"metadata":${inner}}]}`,
    ],
    [`/v1/sessions/${sessionId}`, (inner: string) => `{"metadata":{"k":${inner}}}`],
  ] as const;

describe("deeply nested JSON", () => {
  it.each([
    ["ten thousand arrays", arrays(10_000)],
    ["ten thousand objects", objects(10_000)],
    ["two hundred thousand arrays", arrays(200_000)],
    ["one level past the limit", arrays(MAX_JSON_DEPTH + 1)],
  ])("%s as a whole body is a 400 naming the limit on every body-taking route", async (_, body) => {
    for (const [path] of routes()) {
      const answer = await post(path, body);
      expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(400);
      const { error } = ApiError.parse(answer.body);
      expect(error.type).toBe("invalid_request_error");
      expect(error.message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
    }
  });

  it("is a 400 inside an otherwise valid body too, and leaves nothing behind", async () => {
    const sessionsBefore = (await get("/v1/sessions")).body.data.length;
    const agentsBefore = (await get("/v1/agents")).body.data.length;
    for (const [path, wrap] of routes()) {
      const answer = await post(path, wrap(arrays(10_000)));
      expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(400);
      expect(ApiError.parse(answer.body).error.message).toContain("MAX_JSON_DEPTH");
    }
    expect((await get("/v1/sessions")).body.data).toHaveLength(sessionsBefore);
    expect((await get("/v1/agents")).body.data).toHaveLength(agentsBefore);
    expect((await get(`/v1/sessions/${sessionId}/events`)).body.data).toEqual([]);
  });

  it("stays accepted up to the limit", async () => {
    // The body, its tools list, the tool and its input schema are four levels of the limit.
    const atLimit = await post("/v1/agents", agentWith(arrays(MAX_JSON_DEPTH - 4)));
    expect(atLimit.status, JSON.stringify(atLimit.body)).toBe(200);
    const pastLimit = await post("/v1/agents", agentWith(arrays(MAX_JSON_DEPTH - 3)));
    expect(pastLimit.status).toBe(400);
    expect(ApiError.parse(pastLimit.body).error.message).toContain("MAX_JSON_DEPTH");
  });
});

describe("random JSON in every body-taking route (fuzz)", () => {
  /** Any JSON text: ordinary values, or deep ones of either kind around the limit. */
  const anyJson = fc.oneof(
    fc.jsonValue({ maxDepth: 6 }).map((value) => JSON.stringify(value)),
    fc.integer({ min: MAX_JSON_DEPTH - 3, max: 20_000 }).map(arrays),
    fc.integer({ min: MAX_JSON_DEPTH - 3, max: 20_000 }).map(objects),
    fc.string({ maxLength: 40 }),
  );

  it("never answers a 5xx, whole bodies or inside valid ones", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes()),
        fc.boolean(),
        anyJson,
        async ([path, wrap], whole, inner) => {
          const answer = await post(path, whole ? inner : wrap(inner));
          expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBeLessThan(500);
          if (answer.status >= 400) ApiError.parse(answer.body);
        },
      ),
      { numRuns: 120 },
    );
  }, 120_000);
});
