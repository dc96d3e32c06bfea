import { type Agent, AgentSpec } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { diffAgentVersions } from "./agent-diff";

function version(n: number, spec: Record<string, unknown>): Agent {
  const parsed = AgentSpec.parse({ name: "a", model: { provider: "openai", id: "m" }, ...spec });
  const at = "2026-01-01T00:00:00.000Z";
  return { ...parsed, id: "agent_1", version: n, created_at: at, updated_at: at };
}

describe("diffAgentVersions", () => {
  it("gives a unified diff of the prompt and the other fields that changed", () => {
    const diff = diffAgentVersions(
      version(1, { system: "Be terse.\nUse metric units." }),
      version(2, { system: "Be terse.\nUse imperial units.", metadata: { team: "x" } }),
    );
    expect(diff).toMatchObject({ agent_id: "agent_1", from: 1, to: 2 });
    expect(diff.system_diff).toContain("--- system@v1");
    expect(diff.system_diff).toContain("-Use metric units.");
    expect(diff.system_diff).toContain("+Use imperial units.");
    expect(diff.system_diff).not.toContain("-Be terse.");
    expect(diff.changes).toEqual([{ field: "metadata", from: {}, to: { team: "x" } }]);
  });

  it("is empty for identical specs", () => {
    const same = version(1, { system: "x" });
    expect(diffAgentVersions(same, { ...same, version: 3 })).toMatchObject({ system_diff: "", changes: [] });
  });
});
