import { type Agent, AgentSpec, type AgentVersionDiff } from "@wakeloop/contracts";
import { stableStringify } from "@wakeloop/tool-runtime";
import { createTwoFilesPatch } from "diff";

/**
 * What changed between two versions of an agent: a unified diff of the system prompt (the field
 * self-edit changes, and the one people read line by line) and the other top-level fields that differ.
 */
export function diffAgentVersions(from: Agent, to: Agent): AgentVersionDiff {
  const before = AgentSpec.strip().parse(from);
  const after = AgentSpec.strip().parse(to);
  const changes: AgentVersionDiff["changes"] = [];
  for (const field of Object.keys(AgentSpec.shape) as Array<keyof AgentSpec>) {
    if (field === "system") continue;
    if (stableStringify(before[field]) !== stableStringify(after[field])) {
      changes.push({ field, from: before[field], to: after[field] });
    }
  }
  return {
    agent_id: to.id,
    from: from.version,
    to: to.version,
    system_diff:
      before.system === after.system
        ? ""
        : createTwoFilesPatch(
            `system@v${from.version}`,
            `system@v${to.version}`,
            before.system,
            after.system,
          ),
    changes,
  };
}
