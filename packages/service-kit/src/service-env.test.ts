import { describe, expect, it } from "vitest";
import { checkConfig } from "./parse-config";
import { natsCredentials, serviceEnv } from "./service-env";

const parse = (env: Record<string, string>) => {
  const result = checkConfig(serviceEnv({ healthPort: 9000, metricsPort: 9400 }), env);
  if (!result.ok) throw new Error(result.problems.join("; "));
  return result.config;
};

describe("natsCredentials", () => {
  it("connects with the pair, and anonymously only when NATS_ALLOW_ANONYMOUS says so", () => {
    expect(natsCredentials(parse({ NATS_ALLOW_ANONYMOUS: "true" }))).toBeUndefined();
    expect(natsCredentials(parse({ NATS_USER: "gateway", NATS_PASSWORD: "s3cret" }))).toEqual({
      user: "gateway",
      password: "s3cret",
    });
  });

  it("refuses no credentials at all outside development, saying what to set", () => {
    for (const env of [{}, { NATS_ALLOW_ANONYMOUS: "false" }] as Record<string, string>[])
      expect(() => natsCredentials(parse(env))).toThrow(
        /NATS_USER and NATS_PASSWORD are not set: .*NATS_ALLOW_ANONYMOUS=true on a development machine/,
      );
    expect(() => parse({ NATS_ALLOW_ANONYMOUS: "yes" })).toThrow(/NATS_ALLOW_ANONYMOUS/);
  });

  it("refuses half a pair at start-up, even in development", () => {
    expect(() => natsCredentials(parse({ NATS_USER: "gateway" }))).toThrow(/NATS_USER and NATS_PASSWORD/);
    expect(() => natsCredentials(parse({ NATS_PASSWORD: "s3cret" }))).toThrow(/NATS_USER and NATS_PASSWORD/);
    expect(() => natsCredentials(parse({ NATS_USER: "gateway", NATS_ALLOW_ANONYMOUS: "true" }))).toThrow(
      /set together/,
    );
  });
});

describe("DATABASE_POOL_MAX", () => {
  it("defaults to pg's 10 connections and takes a positive count", () => {
    expect(parse({}).DATABASE_POOL_MAX).toBe(10);
    expect(parse({ DATABASE_POOL_MAX: "40" }).DATABASE_POOL_MAX).toBe(40);
    expect(() => parse({ DATABASE_POOL_MAX: "0" })).toThrow(/DATABASE_POOL_MAX/);
  });
});

describe("OTEL_METRICS_EXPORTER", () => {
  it("serves and pushes metrics by default, and takes the spec's comma list", () => {
    expect(parse({}).OTEL_METRICS_EXPORTER).toEqual(["otlp", "prometheus"]);
    expect(parse({ OTEL_METRICS_EXPORTER: "prometheus" }).OTEL_METRICS_EXPORTER).toEqual(["prometheus"]);
    expect(parse({ OTEL_METRICS_EXPORTER: " none " }).OTEL_METRICS_EXPORTER).toEqual(["none"]);
  });

  it("refuses an exporter it does not know, naming the setting", () => {
    expect(() => parse({ OTEL_METRICS_EXPORTER: "prometheus,console" })).toThrow(/OTEL_METRICS_EXPORTER/);
  });
});
