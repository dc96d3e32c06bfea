import { exceedsJsonDepth, jsonDepthMessage, WakeloopError } from "@wakeloop/contracts";
import type { FastifyInstance } from "fastify";

/**
 * Fastify's JSON parser (with its prototype-poisoning protection), except that an empty body reads as
 * "no body": clients send `content-type: application/json` on body-less POSTs such as archive, and
 * routes that need a body still reject `undefined` through their schema. A body nested deeper than
 * MAX_JSON_DEPTH is a 400 here, before any check or schema walks it.
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
      parseJson(request, text, (error, parsed) => {
        if (error) done(error);
        else if (exceedsJsonDepth(parsed))
          done(new WakeloopError("invalid_request", `invalid body: ${jsonDepthMessage("the body")}`));
        else done(null, parsed);
      });
    },
  );
}
