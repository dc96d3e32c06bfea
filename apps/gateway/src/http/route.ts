import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import type { Access, Principal } from "../auth/principal";
import { parseInput } from "./parse-input";
import { type GatewaySchemaName, type GatewaySchemas, gatewaySchemas } from "./schemas";
import { requireWellFormedInput } from "./well-formed-input";

/**
 * A route is declared once, with its access, input schemas and response, and that one declaration
 * drives both the handler's parsing and the OpenAPI document.
 */

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

export interface RouteResponse {
  status: number;
  description: string;
  /** A named JSON body, or a Server-Sent Events stream the handler writes itself. */
  body: GatewaySchemaName | "event-stream" | "openapi-document";
}

type BodyOf<B> = B extends GatewaySchemaName ? z.output<GatewaySchemas[B]> : undefined;
type QueryOf<Q> = Q extends z.ZodType ? z.output<Q> : undefined;
type PrincipalOf<A> = A extends "public" ? null : Principal;
type ParamNames<P extends string> = P extends `${string}{${infer Name}}${infer Rest}`
  ? Name | ParamNames<Rest>
  : never;
/** `/v1/agents/{id}/versions` → `{ id: string }`. */
export type ParamsOf<P extends string> = { readonly [Name in ParamNames<P>]: string };

export interface RouteContext<P extends string, A extends Access, Body, Query> {
  principal: PrincipalOf<A>;
  params: ParamsOf<P>;
  body: Body;
  /** The body as sent, before schema defaults: updates merge only the fields a client gave. */
  rawBody: unknown;
  query: Query;
  request: FastifyRequest;
  reply: FastifyReply;
  log: FastifyBaseLogger;
}

export interface RouteSpec<
  P extends string,
  A extends Access,
  B extends GatewaySchemaName | undefined,
  Q extends z.ZodObject | undefined,
> {
  method: HttpMethod;
  /** OpenAPI form, `/v1/agents/{id}`. */
  path: P;
  operationId: string;
  summary: string;
  tag: string;
  access: A;
  body?: B;
  query?: Q;
  /** Request headers the route reads, for the OpenAPI document. */
  headers?: readonly { name: string; description: string }[];
  response: RouteResponse;
  handler(context: RouteContext<P, A, BodyOf<B>, QueryOf<Q>>): Promise<unknown>;
}

/** A route with its types erased, as the server registers it and the OpenAPI document lists it. */
export interface Route {
  method: HttpMethod;
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  access: Access;
  body?: GatewaySchemaName;
  query?: z.ZodObject;
  headers?: readonly { name: string; description: string }[];
  response: RouteResponse;
  handle(input: {
    request: FastifyRequest;
    reply: FastifyReply;
    principal: Principal | null;
  }): Promise<unknown>;
}

/** The path's parameters from fastify's routing, which matched every one of them. */
function pathParams<P extends string>(path: P, matched: unknown): ParamsOf<P> {
  const values = (typeof matched === "object" && matched !== null ? matched : {}) as Record<string, unknown>;
  const params: Record<string, string> = {};
  for (const [, name = ""] of path.matchAll(/\{(\w+)\}/g)) {
    const value = values[name];
    if (typeof value !== "string") throw new Error(`path parameter ${name} of ${path} was not matched`);
    params[name] = value;
  }
  return params as ParamsOf<P>;
}

export function defineRoute<
  P extends string,
  A extends Access,
  B extends GatewaySchemaName | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
>(spec: RouteSpec<P, A, B, Q>): Route {
  const { handler, ...meta } = spec;
  return {
    ...meta,
    async handle({ request, reply, principal }) {
      if (spec.access !== "public" && principal === null) {
        throw new Error(`route ${spec.operationId} ran without a principal`);
      }
      requireWellFormedInput(request);
      const body =
        spec.body === undefined ? undefined : parseInput(gatewaySchemas[spec.body], request.body, "body");
      const query = spec.query === undefined ? undefined : parseInput(spec.query, request.query, "query");
      return handler({
        // The access check above makes these the types the spec promises.
        principal: principal as PrincipalOf<A>,
        params: pathParams(spec.path, request.params),
        body: body as BodyOf<B>,
        rawBody: request.body,
        query: query as QueryOf<Q>,
        request,
        reply,
        log: request.log,
      });
    },
  };
}
