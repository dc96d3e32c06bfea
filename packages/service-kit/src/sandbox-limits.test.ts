import { EnvironmentConfig } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { checkConfig } from "./parse-config";
import {
  assertSandboxLimits,
  SandboxLimitsEnv,
  sandboxLimits,
  sandboxLimitViolations,
} from "./sandbox-limits";

const defaults = () => {
  const result = checkConfig(SandboxLimitsEnv, {});
  if (!result.ok) throw new Error(result.problems.join("\n"));
  return sandboxLimits(result.config);
};

describe("sandbox limits", () => {
  it("lets the default environment through the default limits", () => {
    expect(sandboxLimitViolations(EnvironmentConfig.parse({}), defaults())).toEqual([]);
  });

  it("names every limit an environment goes past", () => {
    const environment = EnvironmentConfig.parse({
      cpus: 8,
      memory_mb: 65_536,
      pids_limit: 100_000,
      warm_pool_size: 64,
      workspace_mb: 1_048_576,
      network: "bridge",
      image: "alpine:latest",
    });
    expect(sandboxLimitViolations(environment, defaults()).map((v) => v.limit)).toEqual([
      "SANDBOX_MAX_CPUS",
      "SANDBOX_MAX_MEMORY_MB",
      "SANDBOX_MAX_PIDS",
      "SANDBOX_MAX_WARM_POOL_SIZE",
      "SANDBOX_MAX_WORKSPACE_MB",
      "SANDBOX_ALLOW_NETWORK",
      "SANDBOX_ALLOWED_IMAGES",
    ]);
    expect(() => assertSandboxLimits(environment, defaults())).toThrow(/SANDBOX_MAX_CPUS/);
  });

  it("reads an operator's network switch and image list", () => {
    const result = checkConfig(SandboxLimitsEnv, {
      SANDBOX_ALLOW_NETWORK: "true",
      SANDBOX_ALLOWED_IMAGES: "a:1, b:2",
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const limits = sandboxLimits(result.config);
    expect(limits.allowedImages).toEqual(["a:1", "b:2"]);
    const environment = EnvironmentConfig.parse({ network: "bridge", image: "b:2" });
    expect(sandboxLimitViolations(environment, limits)).toEqual([]);
  });
});
