import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayFixture, startGateway } from "../testing/gateway-fixture";

let gw: GatewayFixture;
let document: unknown;

/** The value at `path` inside free-form JSON; undefined when any step is missing. */
function at(node: unknown, ...path: string[]): unknown {
  let current = node;
  for (const key of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

beforeAll(async () => {
  gw = await startGateway();
  const response = await gw.request("GET", "/v1/openapi.json");
  expect(response.status).toBe(200);
  document = response.body;
});
afterAll(async () => {
  await gw?.close();
});

/** Every route of the API, written out by hand so a route missing from the document fails here. */
const ROUTES = [
  "POST /v1/api_keys",
  "GET /v1/api_keys",
  "DELETE /v1/api_keys/{id}",
  "POST /v1/agents",
  "GET /v1/agents",
  "GET /v1/agents/{id}",
  "POST /v1/agents/{id}",
  "GET /v1/agents/{id}/versions",
  "GET /v1/agents/{id}/versions/diff",
  "POST /v1/agents/{id}/rollback",
  "POST /v1/agents/{id}/archive",
  "POST /v1/agents/{id}/scheduled_tasks",
  "GET /v1/agents/{id}/scheduled_tasks",
  "GET /v1/agents/{id}/scheduled_tasks/{task_id}",
  "POST /v1/agents/{id}/scheduled_tasks/{task_id}/enable",
  "POST /v1/agents/{id}/scheduled_tasks/{task_id}/disable",
  "DELETE /v1/agents/{id}/scheduled_tasks/{task_id}",
  "GET /v1/agents/{id}/ui_components/{name}",
  "GET /v1/agents/{id}/memory",
  "GET /v1/agents/{id}/memory/{store}/entries",
  "GET /v1/agents/{id}/memory/{store}/entry",
  "PUT /v1/agents/{id}/memory/{store}/entry",
  "DELETE /v1/agents/{id}/memory/{store}/entry",
  "GET /v1/agents/{id}/memory/{store}/versions",
  "GET /v1/agents/{id}/memory-versions/{version_id}",
  "GET /v1/agents/{id}/resources",
  "GET /v1/agents/{id}/resources/versions",
  "GET /v1/agents/{id}/resources/versions/{version_id}",
  "POST /v1/agents/{id}/resources/restore",
  "PUT /v1/provider_credentials/{provider}",
  "GET /v1/provider_credentials",
  "DELETE /v1/provider_credentials/{provider}",
  "PUT /v1/vault/secrets/{name}",
  "GET /v1/vault/secrets",
  "DELETE /v1/vault/secrets/{name}",
  "POST /v1/environments",
  "GET /v1/environments",
  "GET /v1/environments/{id}",
  "POST /v1/environments/{id}",
  "POST /v1/environments/{id}/archive",
  "POST /v1/sessions",
  "GET /v1/sessions",
  "GET /v1/sessions/{id}",
  "POST /v1/sessions/{id}",
  "POST /v1/sessions/{id}/archive",
  "POST /v1/sessions/{id}/events",
  "GET /v1/sessions/{id}/events",
  "GET /v1/sessions/{id}/events/stream",
  "GET /v1/sessions/{id}/pending",
  "GET /v1/sessions/{id}/tools",
  "GET /v1/sessions/{id}/trace",
  "GET /v1/openapi.json",
];

function operations(): string[] {
  return Object.entries(at(document, "paths") as Record<string, Record<string, unknown>>).flatMap(
    ([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
  );
}

function resolve(ref: string): unknown {
  expect(ref.startsWith("#/")).toBe(true);
  return at(
    document,
    ...ref
      .slice(2)
      .split("/")
      .map((token) => token.replaceAll("~1", "/").replaceAll("~0", "~")),
  );
}

function refsIn(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(refsIn);
  if (node === null || typeof node !== "object") return [];
  return Object.entries(node).flatMap(([key, value]) =>
    key === "$ref" && typeof value === "string" ? [value] : refsIn(value),
  );
}

describe("GET /v1/openapi.json", () => {
  it("is an OpenAPI 3.1 document with exactly the API's routes", () => {
    expect(at(document, "openapi")).toBe("3.1.0");
    expect(operations().sort()).toEqual([...ROUTES].sort());
  });

  it("documents request and response bodies with the contracts' schemas", () => {
    const createAgent = at(document, "paths", "/v1/agents", "post");
    expect(at(createAgent, "requestBody", "content", "application/json", "schema")).toEqual({
      $ref: "#/components/schemas/CreateAgentRequest",
    });
    expect(at(createAgent, "responses", "200", "content", "application/json", "schema")).toEqual({
      $ref: "#/components/schemas/Agent",
    });
    const postEvents = at(document, "paths", "/v1/sessions/{id}/events", "post");
    expect(at(postEvents, "responses", "202", "content", "application/json", "schema", "$ref")).toBe(
      "#/components/schemas/PostEventsResponse",
    );
    expect(at(postEvents, "parameters")).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: "id", in: "path", required: true }),
        expect.objectContaining({ name: "Idempotency-Key", in: "header" }),
      ]),
    );
    const listEvents = at(document, "paths", "/v1/sessions/{id}/events", "get", "parameters") as unknown[];
    expect(listEvents.map((parameter) => at(parameter, "name"))).toEqual(["id", "after_seq", "limit"]);
    const stream = at(
      document,
      "paths",
      "/v1/sessions/{id}/events/stream",
      "get",
      "responses",
      "200",
      "content",
    );
    expect(Object.keys(stream as object)).toEqual(["text/event-stream"]);
    // The user event union is spelled out, so clients can generate types from it.
    expect(JSON.stringify(at(document, "components", "schemas", "PostEventsRequest"))).toContain(
      "user.tool_confirmation",
    );
    // So is every event a client renders, UI blocks with their kinds included.
    const sessionEvent = JSON.stringify(at(document, "components", "schemas", "SessionEvent"));
    for (const text of ["agent.ui_message", "agent.ui_blocks", "submitLabel", "chartType"])
      expect(sessionEvent).toContain(text);
    // The tool policy's naming profile, with the names it may take.
    const toolNames = at(
      document,
      "components",
      "schemas",
      "CreateAgentRequest",
      "properties",
      "tool_policy",
      "properties",
      "tool_names",
    );
    expect(toolNames).toMatchObject({ enum: ["personal_agent", "openboa", "openclaw"] });
  });

  it("resolves every reference inside the document", () => {
    const refs = refsIn(document);
    expect(refs.length).toBeGreaterThan(30);
    for (const ref of refs) expect(resolve(ref), ref).toBeDefined();
  });

  it("declares the API key schemes, and needs no key for itself", () => {
    expect(at(document, "components", "securitySchemes")).toMatchObject({
      bearerAuth: { type: "http", scheme: "bearer" },
      apiKeyHeader: { type: "apiKey", in: "header", name: "x-api-key" },
    });
    expect(at(document, "paths", "/v1/sessions", "get", "security")).toEqual([
      { bearerAuth: [] },
      { apiKeyHeader: [] },
    ]);
    expect(at(document, "paths", "/v1/openapi.json", "get", "security")).toEqual([]);
  });
});
