import { checkConfig } from "@wakeloop/service-kit";
import { describe, expect, it } from "vitest";
import { OrchestratorEnv } from "./config";

describe("orchestrator config", () => {
  it("lingers 10 ms between outbox relay rounds under load by default, never with 0, and names a bad value", () => {
    const parsed = checkConfig(OrchestratorEnv, {});
    expect(parsed.ok && parsed.config.OUTBOX_RELAY_LINGER_MS).toBe(10);
    const off = checkConfig(OrchestratorEnv, { OUTBOX_RELAY_LINGER_MS: "0" });
    expect(off.ok && off.config.OUTBOX_RELAY_LINGER_MS).toBe(0);
    const bad = checkConfig(OrchestratorEnv, { OUTBOX_RELAY_LINGER_MS: "-5" });
    expect(bad.ok ? [] : bad.problems).toEqual([expect.stringMatching(/^OUTBOX_RELAY_LINGER_MS: /)]);
  });
});
