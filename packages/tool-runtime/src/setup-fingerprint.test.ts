import { AgentSpec, EnvironmentSpec } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { compareSetups, setupFingerprint } from "./setup-fingerprint";

const agent = AgentSpec.parse({ name: "a", model: { provider: "openai", id: "gpt" }, system: "Be terse." });
const environment = EnvironmentSpec.parse({ name: "env" });

describe("setupFingerprint", () => {
  it("is stable for equal setups whatever their key order, and ignores names and metadata", () => {
    const reordered = JSON.parse(JSON.stringify({ ...agent, name: "b", metadata: { x: "y" } })) as AgentSpec;
    expect(setupFingerprint({ agent: reordered, environment })).toEqual(
      setupFingerprint({ agent, environment }),
    );
    expect(setupFingerprint({ agent, environment }).fingerprint).toMatch(/^[0-9a-f]{16}$/);
  });

  it("names exactly the sections that changed", () => {
    const base = setupFingerprint({ agent, environment });
    const cases = [
      [{ agent: { ...agent, system: "Be verbose." }, environment }, ["prompt"]],
      [{ agent: { ...agent, model: { ...agent.model, id: "other" } }, environment }, ["model"]],
      [{ agent: { ...agent, tool_policy: { deny: ["set_state"] } }, environment }, ["policy"]],
      [{ agent: { ...agent, tools: [{ type: "builtin", configs: [] }] }, environment }, ["tools"]],
      [{ agent, environment: null }, ["environment"]],
      [{ agent: { ...agent, system: "x" }, environment: null }, ["prompt", "environment"]],
    ] as const;
    for (const [setup, changed] of cases) {
      const comparison = compareSetups(
        base,
        setupFingerprint(setup as Parameters<typeof setupFingerprint>[0]),
      );
      expect(comparison).toEqual({ matches: false, changedSections: changed });
    }
    expect(compareSetups(base, setupFingerprint({ agent, environment }))).toEqual({
      matches: true,
      changedSections: [],
    });
  });
});
