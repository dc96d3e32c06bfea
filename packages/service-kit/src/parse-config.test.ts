import { describe, expect, it } from "vitest";
import { checkConfig } from "./parse-config";
import { serviceEnv } from "./service-env";

const Schema = serviceEnv({ healthPort: 9099, metricsPort: 9499 });

describe("checkConfig", () => {
  it("fills every default so a developer machine needs no variables", () => {
    expect(checkConfig(Schema, {})).toEqual({
      ok: true,
      config: {
        DATABASE_URL: "postgres://wakeloop_app@127.0.0.1:5432/wakeloop",
        DATABASE_POOL_MAX: 10,
        NATS_URL: ["nats://127.0.0.1:4222"],
        NATS_STREAM_REPLICAS: 1,
        NATS_ALLOW_ANONYMOUS: false,
        WL_SUBJECT_PREFIX: "wl",
        OTEL_METRICS_EXPORTER: ["otlp", "prometheus"],
        LOG_LEVEL: "info",
        SHUTDOWN_TIMEOUT_MS: 8_000,
        HEALTH_PORT: 9099,
        HEALTH_HOST: "127.0.0.1",
        METRICS_PORT: 9499,
        METRICS_HOST: "127.0.0.1",
      },
    });
  });

  it("coerces numbers, splits a NATS cluster list and treats empty variables as unset", () => {
    const result = checkConfig(Schema, {
      HEALTH_PORT: "0",
      NATS_URL: "nats://a:4222, nats://b:4222",
      OTEL_EXPORTER_OTLP_ENDPOINT: "",
      LOG_LEVEL: "debug",
    });
    expect(result).toMatchObject({
      ok: true,
      config: { HEALTH_PORT: 0, NATS_URL: ["nats://a:4222", "nats://b:4222"], LOG_LEVEL: "debug" },
    });
    expect(result.ok && "OTEL_EXPORTER_OTLP_ENDPOINT" in result.config).toBe(false);
  });

  it("lists every bad variable with its message and reason, never its value", () => {
    const result = checkConfig(Schema, {
      DATABASE_URL: "s3cret-not-a-url",
      HEALTH_PORT: "70000",
      LOG_LEVEL: "loud",
      NATS_URL: "nats://ok:4222,not a url",
    });
    expect(result.ok).toBe(false);
    const problems = result.ok ? [] : result.problems;
    expect(problems.map((problem) => problem.split(":")[0])).toEqual([
      "DATABASE_URL",
      "NATS_URL",
      "LOG_LEVEL",
      "HEALTH_PORT",
    ]);
    expect(problems[1]).toMatch(/^NATS_URL: at 1: Invalid URL \(NATS JetStream carries/);
    expect(problems[0]).toContain("Postgres is the source of truth");
    expect(problems.join("\n")).not.toContain("s3cret");
  });
});
