import { WakeloopApiError } from "@wakeloop/sdk";
import { describe, expect, it } from "vitest";
import { CliError, fieldPath, reportError } from "./errors";

describe("fieldPath", () => {
  it("writes keys with dots and indexes in brackets", () => {
    expect(fieldPath(["tools", 0, "configs", 2, "name"])).toBe("tools[0].configs[2].name");
    expect(fieldPath([])).toBe("(top level)");
  });
});

describe("reportError", () => {
  const api = (status: number, type: string, message: string, details?: unknown) =>
    reportError(
      new WakeloopApiError(status, { type, message, details } as WakeloopApiError["error"]),
      "http://gw",
    );

  it("tells a refused key to log in again, with the auth exit code", () => {
    const report = api(401, "authentication_error", "invalid API key");
    expect(report).toEqual({ message: expect.stringContaining("wakeloop login"), exitCode: 3 });
    expect(api(403, "permission_error", "owners only").message).toBe("permission denied: owners only");
  });

  it("says not found with its own exit code", () => {
    expect(api(404, "not_found_error", "no session x")).toEqual({
      message: "not found: no session x",
      exitCode: 4,
    });
  });

  it("lists the gateway's validation issues with their field paths", () => {
    const report = api(400, "invalid_request_error", "invalid body", {
      issues: [{ path: ["tool_policy", "deny", 0], message: "unknown tool rm_rf" }],
    });
    expect(report.exitCode).toBe(1);
    expect(report.message).toBe(
      "the API refused the request (400 invalid_request_error): invalid body\n" +
        "  tool_policy.deny[0]: unknown tool rm_rf",
    );
  });

  it("says when trying again may help", () => {
    expect(api(429, "rate_limit_error", "slow down").message).toContain("Try again later");
    expect(api(503, "api_error", "database down").message).toContain("Trying again later may help");
  });

  it("names the gateway it could not reach", () => {
    const refused = new TypeError("fetch failed", {
      cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }),
    });
    expect(reportError(refused, "http://127.0.0.1:9")).toEqual({
      message: expect.stringMatching(
        /^cannot reach the Wakeloop gateway at http:\/\/127\.0\.0\.1:9 \(ECONNREFUSED\)/,
      ),
      exitCode: 5,
    });
  });

  it("passes a CLI error through and labels anything else unexpected", () => {
    expect(reportError(new CliError("bad flag", 2))).toEqual({ message: "bad flag", exitCode: 2 });
    expect(reportError(new RangeError("boom"))).toEqual({ message: "unexpected error: boom", exitCode: 1 });
  });
});
