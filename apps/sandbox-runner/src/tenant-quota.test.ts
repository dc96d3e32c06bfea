import { describe, expect, it } from "vitest";
import { TenantQuota } from "./tenant-quota";

describe("TenantQuota", () => {
  it("counts held sandboxes and creations in flight against the cap, per tenant", () => {
    const held = new Map([["tnt_a", 1]]);
    const quota = new TenantQuota(3, (tenantId) => held.get(tenantId) ?? 0);
    const first = quota.reserve("tnt_a");
    quota.reserve("tnt_a");
    expect(() => quota.reserve("tnt_a")).toThrow(/SANDBOX_MAX_PER_TENANT 3/);
    expect(() => quota.reserve("tnt_b")).not.toThrow();
    first();
    expect(() => quota.reserve("tnt_a")).not.toThrow();
  });
});
