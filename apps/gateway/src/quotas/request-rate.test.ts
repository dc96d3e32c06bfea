import { describe, expect, it } from "vitest";
import { createRequestRate } from "./request-rate";

describe("request rate", () => {
  it("refuses a key past its requests per window with when to retry, other keys unaffected", async () => {
    const rate = createRequestRate({ requests: 3, windowSeconds: 60 });
    for (let index = 0; index < 3; index++) await rate.take("key_a");
    await expect(rate.take("key_a")).rejects.toMatchObject({
      code: "rate_limited",
      details: { retry_after_seconds: expect.any(Number) },
    });
    await expect(rate.take("key_b")).resolves.toBeUndefined();
  });

  it("is off at 0", async () => {
    const rate = createRequestRate({ requests: 0, windowSeconds: 60 });
    for (let index = 0; index < 100; index++) await rate.take("key_a");
  });
});
