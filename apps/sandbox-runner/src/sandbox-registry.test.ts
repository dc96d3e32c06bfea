import { describe, expect, it } from "vitest";
import type { RunnerLog } from "./runner-log";
import { SandboxRegistry } from "./sandbox-registry";
import type { Binding } from "./session-store";
import { silent, testEnvironment } from "./testing/docker-fixture";

function binding(sessionId: string, tenantId: string): Binding {
  return {
    tenant_id: tenantId,
    session_id: sessionId,
    agent_id: null,
    environment: testEnvironment(),
    container_id: `ctr_${sessionId}`,
    workspace_volume: `ws_${sessionId}`,
    substrate_volume: null,
    network: null,
  };
}

function registry() {
  const warnings: Array<Record<string, unknown>> = [];
  const log = { ...silent, warn: (fields: Record<string, unknown>) => warnings.push(fields) } as RunnerLog;
  return { warnings, registry: new SandboxRegistry("runner_a", log) };
}

describe("SandboxRegistry", () => {
  it("hands a held sandbox only to its tenant, and logs the refusal", () => {
    const { registry: held, warnings } = registry();
    const sandbox = held.hold(binding("ses_1", "tnt_a"), null, "closed");
    expect(held.held("ses_1", "tnt_a")).toBe(sandbox);
    expect(() => held.held("ses_1", "tnt_b")).toThrow(
      expect.objectContaining({ code: "sandbox_tenant_mismatch" }),
    );
    expect(warnings).toEqual([{ sessionId: "ses_1", tenantId: "tnt_b" }]);
    expect(() => held.held("ses_2", "tnt_a")).toThrow(expect.objectContaining({ code: "sandbox_not_found" }));
  });

  it("counts a tenant's sandboxes until they are dropped", () => {
    const { registry: held } = registry();
    held.hold(binding("ses_1", "tnt_a"), null, "ready");
    held.hold(binding("ses_2", "tnt_a"), null, "closed");
    held.hold(binding("ses_3", "tnt_b"), null, "ready");
    expect(held.countOf("tnt_a")).toBe(2);
    held.drop("ses_1");
    expect(held.countOf("tnt_a")).toBe(1);
    expect(held.holds("ses_1")).toBe(false);
    expect(held.all().map((sandbox) => sandbox.binding.session_id)).toEqual(["ses_2", "ses_3"]);
  });

  it("describes a held sandbox by status and environment, and an unknown one as absent", () => {
    const { registry: held } = registry();
    held.hold(binding("ses_1", "tnt_a"), null, "closed");
    expect(held.describe("ses_1")).toEqual({
      session_id: "ses_1",
      runner_id: "runner_a",
      status: "closed",
      container_id: null,
      environment: testEnvironment(),
    });
    expect(held.describe("ses_9")).toMatchObject({ status: "absent", environment: null });
  });
});
