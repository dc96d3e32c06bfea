import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { WakeloopError } from "@wakeloop/contracts";
import type { FastifyBaseLogger } from "fastify";
import { toHttpError } from "./api-error";

/**
 * Oversized bodies get their 413 whatever the client does. Fastify checks the limit once the request
 * reaches it, which is too late for two kinds of client: one that sends `Expect: 100-continue` has
 * already been told to go ahead by Node, and one that keeps writing after the answer gets a reset when
 * the connection closes under it, and often never reads the answer.
 */

export interface BodyLimits {
  bodyLimitBytes: number;
  /** How much of an unread body is read and thrown away so the client sees the answer, not a reset. */
  discardBytes: number;
}

/** A slow client is not waited for longer than this while its unread body is thrown away. */
const DISCARD_MS = 10_000;

/**
 * Answers `Expect: 100-continue` itself: a declared length over the limit is a 413 before any byte of
 * the body, anything else is invited to continue and handled as usual.
 */
export function answerExpectContinue(server: Server, limits: BodyLimits, log: FastifyBaseLogger): void {
  server.on("checkContinue", (request: IncomingMessage, response: ServerResponse) => {
    const declared = Number(request.headers["content-length"]);
    if (Number.isFinite(declared) && declared > limits.bodyLimitBytes) {
      const http = toHttpError(tooLarge(limits.bodyLimitBytes));
      log.info({ status: 413, content_length: declared }, "refused an oversized body before it was sent");
      // The body never comes, so the connection cannot carry another request.
      const body = JSON.stringify(http.body);
      response.writeHead(413, {
        "content-type": "application/json; charset=utf-8",
        "content-length": Buffer.byteLength(body),
        connection: "close",
      });
      response.end(body);
      return;
    }
    response.writeContinue();
    server.emit("request", request, response);
  });
}

function tooLarge(limit: number): WakeloopError {
  return new WakeloopError("payload_too_large", `the request body is larger than ${limit} bytes`);
}

/**
 * Reads and throws away what is left of a request's body, up to `discardBytes` and `DISCARD_MS`, so an
 * error answered before the body was read reaches the client. True when the whole body is gone; past
 * either bound it gives up (false) and the connection must close: a client cannot make the gateway
 * read forever.
 */
export function discardUnreadBody(request: IncomingMessage, discardBytes: number): Promise<boolean> {
  if (request.readableEnded) return Promise.resolve(true);
  if (request.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    let seen = 0;
    const timer = setTimeout(() => done(false), DISCARD_MS);
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > discardBytes) done(false);
    };
    const onEnd = () => done(true);
    const onFailure = () => done(false);
    function done(whole: boolean) {
      clearTimeout(timer);
      request.off("data", onData).off("end", onEnd).off("error", onFailure).off("close", onFailure);
      resolve(whole);
    }
    request.on("data", onData).once("end", onEnd).once("error", onFailure).once("close", onFailure);
    request.resume();
  });
}
