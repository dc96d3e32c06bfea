import type { FastifyInstance } from "fastify";

/**
 * Fastify's JSON parser (with its prototype-poisoning protection), except that an empty body reads as
 * "no body": clients send `content-type: application/json` on body-less POSTs such as archive, and
 * routes that need a body still reject `undefined` through their schema.
 */
export function registerJsonBodyParser(app: FastifyInstance, bodyLimitBytes: number): void {
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser(
    "application/json",
    { parseAs: "string", bodyLimit: bodyLimitBytes },
    (request, body, done) => {
      const text = typeof body === "string" ? body : body.toString("utf8");
      if (text.trim() === "") {
        done(null, undefined);
        return;
      }
      parseJson(request, text, done);
    },
  );
}
