import { type ApiSchemaName, apiJsonSchema, apiSchemas } from "@wakeloop/contracts";
import { z } from "zod";
import type { Route } from "../http/route";
import { type GatewaySchemaName, gatewaySchemas } from "../http/schemas";

type JsonObject = Record<string, unknown>;

const COMPONENTS = "#/components/schemas/";
const SECURITY = [{ bearerAuth: [] }, { apiKeyHeader: [] }];

function isApiSchemaName(name: string): name is ApiSchemaName {
  return Object.hasOwn(apiSchemas, name);
}

/** Request bodies describe what a client sends (defaults optional); everything else what it gets back. */
function schemaIo(name: GatewaySchemaName): "input" | "output" {
  return name.endsWith("Request") || name === "UserEventInput" ? "input" : "output";
}

/**
 * A named body as a component. zod writes references relative to the schema it was asked for (`#`,
 * `#/$defs/…`); inside the document they must point into the component, so they are re-rooted.
 */
function componentSchema(name: GatewaySchemaName): JsonObject {
  const schema = isApiSchemaName(name)
    ? apiJsonSchema(name)
    : (z.toJSONSchema(gatewaySchemas[name], { io: schemaIo(name), unrepresentable: "any" }) as JsonObject);
  const { $schema: _dialect, ...body } = schema;
  return reroot(body, `${COMPONENTS}${name}`) as JsonObject;
}

function reroot(value: unknown, base: string): unknown {
  if (Array.isArray(value)) return value.map((item) => reroot(item, base));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) => [
      key,
      key === "$ref" && typeof child === "string" && child.startsWith("#")
        ? `${base}${child.slice(1)}`
        : reroot(child, base),
    ]),
  );
}

function queryParameters(query: z.ZodObject | undefined): JsonObject[] {
  if (query === undefined) return [];
  const schema = z.toJSONSchema(query, { io: "input", unrepresentable: "any" }) as {
    properties?: Record<string, JsonObject>;
    required?: string[];
  };
  return Object.entries(schema.properties ?? {}).map(([name, property]) => ({
    name,
    in: "query",
    required: schema.required?.includes(name) ?? false,
    schema: property,
  }));
}

function operation(route: Route, use: (name: GatewaySchemaName) => JsonObject): JsonObject {
  const pathParameters = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: "path",
    required: true,
    schema: { type: "string" },
  }));
  const headerParameters = (route.headers ?? []).map(({ name, description }) => ({
    name,
    in: "header",
    required: false,
    description,
    schema: { type: "string" },
  }));
  const error = { description: "An error", content: { "application/json": { schema: use("ApiError") } } };
  return {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    security: route.access === "public" ? [] : SECURITY,
    ...(route.access === "owner" ? { "x-required-role": "owner" } : {}),
    parameters: [...pathParameters, ...queryParameters(route.query), ...headerParameters],
    ...(route.body === undefined
      ? {}
      : { requestBody: { required: true, content: { "application/json": { schema: use(route.body) } } } }),
    responses: {
      [String(route.response.status)]: {
        description: route.response.description,
        content: responseContent(route, use),
      },
      "4XX": error,
      "5XX": error,
    },
  };
}

function responseContent(route: Route, use: (name: GatewaySchemaName) => JsonObject): JsonObject {
  const body = route.response.body;
  if (body === "event-stream") {
    return {
      "text/event-stream": {
        schema: { type: "string", description: "Server-Sent Events; each `data:` line is a SessionEvent" },
        "x-event-schema": use("SessionEvent"),
      },
    };
  }
  if (body === "openapi-document") return { "application/json": { schema: { type: "object" } } };
  return { "application/json": { schema: use(body) } };
}

/** The OpenAPI 3.1 document of `routes`, with every body schema generated from the contracts. */
export function openApiDocument(
  routes: readonly Route[],
  info: { title: string; version: string },
): JsonObject {
  const used = new Set<GatewaySchemaName>();
  const use = (name: GatewaySchemaName) => {
    used.add(name);
    return { $ref: `${COMPONENTS}${name}` };
  };
  const paths: Record<string, JsonObject> = {};
  for (const route of routes) {
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operation(route, use) };
  }
  return {
    openapi: "3.1.0",
    info,
    security: SECURITY,
    paths,
    components: {
      schemas: Object.fromEntries([...used].sort().map((name) => [name, componentSchema(name)])),
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description: "An API key: `Authorization: Bearer wl_…`",
        },
        apiKeyHeader: { type: "apiKey", in: "header", name: "x-api-key" },
      },
    },
  };
}
