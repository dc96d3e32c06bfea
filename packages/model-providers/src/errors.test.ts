import { APIError as AnthropicAPIError } from "@anthropic-ai/sdk";
import { WakeloopError } from "@wakeloop/contracts";
import { EgressError } from "@wakeloop/egress";
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

describe("toModelError keeps provider bodies out of the message", () => {
  const secret = "sk-live-0123456789abcdef";

  it.each([
    [400, "model_invalid_request", "the provider answered 400: the provider refused the request"],
    [429, "model_rate_limited", "the provider answered 429: the provider's rate limit was reached"],
    [500, "model_request_failed", "the provider answered 500: the request failed"],
  ])("a %i says its status and class only", (status, code, message) => {
    const body = { error: { message: `your key ${secret} is wrong`, type: "invalid_request_error" } };
    for (const error of [
      OpenAIAPIError.generate(status, body, undefined, new Headers()),
      AnthropicAPIError.generate(status, body, undefined, new Headers()),
    ]) {
      expect(error.message).toContain(secret);
      const mapped = toModelError(error);
      expect(mapped).toMatchObject({ code, message });
      expect(mapped.cause).toBe(error);
    }
  });

  it("does not copy the text of errors from outside the SDKs", () => {
    const parse = new SyntaxError(`Unexpected token, "${secret}" is not valid JSON`);
    expect(toModelError(parse).message).not.toContain(secret);
  });

  it("keeps the egress guard's refusal, found in the cause chain, as a terminal error", () => {
    const refused = new EgressError("egress_refused", "egress to 127.0.0.1 is refused: loopback …");
    const wrapped = new TypeError("fetch failed", { cause: refused });
    const mapped = toModelError(new Error("Connection error.", { cause: wrapped }));
    expect(mapped).toMatchObject({
      code: "model_egress_refused",
      retryable: false,
      message: refused.message,
    });
    const slow = new EgressError("egress_timeout", "the request took longer than …");
    expect(toModelError(slow)).toMatchObject({ code: "model_request_failed", retryable: true });
  });
});
