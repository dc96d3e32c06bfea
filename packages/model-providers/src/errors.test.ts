import { APIError as AnthropicAPIError } from "@anthropic-ai/sdk";
import { WakeloopError } from "@wakeloop/contracts";
import { APIError as OpenAIAPIError } from "openai";
import { describe, expect, it } from "vitest";
import { ModelError, retryDelayMs, toModelError } from "./errors";

const sequence = (...values: number[]) => {
  let at = 0;
  return () => values[at++ % values.length] ?? 0;
};

describe("retryDelayMs", () => {
  const overloaded = new ModelError("model_overloaded", "busy");

  it("grows the ceiling exponentially and jitters over all of it", () => {
    const random = () => 0.5;
    expect([1, 2, 3, 4].map((attempt) => retryDelayMs(overloaded, attempt, { random, baseMs: 100 }))).toEqual(
      [50, 100, 200, 400],
    );
    expect(retryDelayMs(overloaded, 1, { random: () => 0, baseMs: 100 })).toBe(0);
    expect(retryDelayMs(overloaded, 3, { random: () => 0.999, baseMs: 100 })).toBe(399);
  });

  it("caps the ceiling at maxMs", () => {
    expect(retryDelayMs(overloaded, 30, { random: () => 0.999, baseMs: 1_000, maxMs: 10_000 })).toBe(9_990);
  });

  it("never waits less than the provider's retry-after", () => {
    const limited = new ModelError("model_rate_limited", "slow", { details: { retryAfterMs: 3_000.4 } });
    const random = sequence(0.1, 0.9);
    expect(retryDelayMs(limited, 1, { random, baseMs: 1_000 })).toBe(3_001);
    expect(retryDelayMs(limited, 4, { random, baseMs: 1_000 })).toBe(7_200);
  });

  it("returns null for errors that retrying cannot fix", () => {
    const random = () => 0.5;
    expect(retryDelayMs(new ModelError("model_invalid_request", "bad"), 1, { random })).toBeNull();
    expect(retryDelayMs(new ModelError("model_aborted", "stop"), 1, { random })).toBeNull();
    expect(retryDelayMs(new Error("plain"), 1, { random })).toBeNull();
    expect(retryDelayMs(new WakeloopError("other", "x", { retryable: true }), 1, { random })).toBe(500);
  });
});

describe("toModelError", () => {
  it("lets an abort of the caller's signal win over the error it caused", () => {
    const signal = AbortSignal.abort();
    expect(toModelError(new TypeError("terminated"), signal).code).toBe("model_aborted");
  });

  it("reads retry-after-ms, retry-after seconds and retry-after dates", () => {
    const limited = (headers: Record<string, string>) =>
      toModelError(AnthropicAPIError.generate(429, { type: "error" }, undefined, new Headers(headers)));
    expect(limited({ "retry-after-ms": "1500" }).details.retryAfterMs).toBe(1_500);
    expect(limited({ "retry-after": "2" }).details.retryAfterMs).toBe(2_000);
    const later = new Date(Date.now() + 60_000).toUTCString();
    expect(limited({ "retry-after": later }).details.retryAfterMs).toBeGreaterThan(55_000);
    expect(limited({}).details.retryAfterMs).toBeUndefined();
  });

  it("classifies errors without a status by the provider's error type", () => {
    const midStream = new AnthropicAPIError(undefined, {}, undefined, new Headers(), "rate_limit_error");
    expect(toModelError(midStream).code).toBe("model_rate_limited");
    const invalid = new OpenAIAPIError(undefined, { type: "invalid_request_error" }, "bad", undefined);
    expect(toModelError(invalid)).toMatchObject({ code: "model_invalid_request", retryable: false });
  });

  it("treats 408 and 409 as failed requests worth retrying", () => {
    const timeout = OpenAIAPIError.generate(408, { error: {} }, undefined, new Headers());
    expect(toModelError(timeout)).toMatchObject({ code: "model_request_failed", retryable: true });
    const conflict = AnthropicAPIError.generate(409, { type: "error" }, undefined, new Headers());
    expect(toModelError(conflict).code).toBe("model_request_failed");
  });

  it("treats errors from outside the SDKs as failed requests and keeps the cause", () => {
    const cause = new TypeError("terminated");
    const error = toModelError(cause);
    expect(error).toMatchObject({ code: "model_request_failed", retryable: true, cause });
    expect(error).toBeInstanceOf(WakeloopError);
    expect(toModelError(error)).toBe(error);
  });
});
