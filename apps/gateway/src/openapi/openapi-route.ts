import { defineRoute, type Route } from "../http/route";
import { openApiDocument } from "./openapi-document";

export const API_INFO = { title: "Wakeloop API", version: "1.0.0" };

/** Serves the document of `routes` plus this route itself; built once, since routes never change. */
export function openApiRoute(routes: readonly Route[]): Route {
  let document: Record<string, unknown> | undefined;
  const self: Route = defineRoute({
    method: "GET",
    path: "/v1/openapi.json",
    operationId: "getOpenApiDocument",
    summary: "This API's OpenAPI 3.1 document",
    tag: "meta",
    access: "public",
    response: { status: 200, body: "openapi-document", description: "The OpenAPI document" },
    handler: async () => {
      document ??= openApiDocument([...routes, self], API_INFO);
      return document;
    },
  });
  return self;
}
