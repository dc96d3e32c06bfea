import { describe, expect, it } from "vitest";
import { isVolatileKey, stripVolatile } from "./volatile";

describe("stripVolatile", () => {
  it("drops time, duration and per-call id fields at any depth", () => {
    expect(
      stripVolatile({
        output: "ok",
        exit_code: 0,
        duration_ms: 12,
        startedAt: "x",
        meta: { request_id: "r1", "Trace-Id": "t", created_at: "2024-01-01T00:00:00Z", process_id: "p1" },
        items: [{ id: 1, name: "a" }],
      }),
    ).toEqual({
      output: "ok",
      exit_code: 0,
      startedAt: "x",
      meta: { process_id: "p1" },
      items: [{ name: "a" }],
    });
  });

  it("replaces whole ISO timestamps in strings", () => {
    expect(
      stripVolatile(["2024-05-01T10:11:12.345Z", "2024-05-01 10:11", "at 2024-05-01T10:11:12Z"]),
    ).toEqual(["<timestamp>", "<timestamp>", "at 2024-05-01T10:11:12Z"]);
  });

  it("keeps resource ids and reads keys case-insensitively", () => {
    expect(isVolatileKey("shell_id")).toBe(false);
    expect(isVolatileKey("session_id")).toBe(false);
    expect(isVolatileKey("Timeout_MS")).toBe(true);
    expect(isVolatileKey("command-id")).toBe(true);
  });
});
