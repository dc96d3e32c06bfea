import { WakeloopError } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { toHttpError } from "./api-error";

describe("toHttpError", () => {
  it.each([
    [
      "a refused connection",
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }),
    ],
    ["a connection cut mid-query", new Error("Connection terminated unexpectedly")],
    ["a pool that could not connect in time", new Error("timeout exceeded when trying to connect")],
  ])("answers %s with a retryable 503 and Retry-After", (_, error) => {
    const http = toHttpError(error);
    expect(http.status).toBe(503);
    expect(http.body.error.type).toBe("api_error");
    expect(http.retryAfterSeconds).toBeGreaterThan(0);
  });

  it("keeps other failures a generic 500 that leaks nothing", () => {
    const http = toHttpError(new Error('relation "secret_table" does not exist'));
    expect(http).toMatchObject({
      status: 500,
      body: { error: { type: "api_error", message: "internal error" } },
    });
    expect(http.retryAfterSeconds).toBeUndefined();
  });

  it("answers quota errors with 429 and the Retry-After they name", () => {
    const http = toHttpError(
      new WakeloopError("rate_limited", "too many requests", { details: { retry_after_seconds: 1.2 } }),
    );
    expect(http).toMatchObject({
      status: 429,
      retryAfterSeconds: 2,
      body: { error: { type: "rate_limit_error" } },
    });
  });
});
