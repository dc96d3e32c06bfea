import { type ResourceToolName, resourceToolInputs, type ToolDefinition } from "@wakeloop/contracts";
import { managedTool } from "./define";

// The agent's versioned substrate (openboa "resources"): /workspace/agent is read-only in every sandbox,
// so these tools are the only way to change it. They run in the sandbox runner (executor "sandbox"),
// which holds both the session's workspace copy and the agent's mounted substrate, and are offered only
// while the session's sandbox is ready. Writes are recorded by tool call id (a retry returns the
// version it wrote), so every one is idempotent.

type Traits = {
  description: string;
  /** Changes the workspace copy (stage) or the shared substrate (restore, promote). */
  writes?: boolean;
  /** Writes the shared substrate every later session of the agent sees: a person confirms. */
  ask?: boolean;
  resourceKey?: string;
};

const traits: Record<ResourceToolName, Traits> = {
  resources_stage_from_substrate: {
    description:
      "Copy a substrate file (/workspace/agent/<path>, read-only) into the writable workspace (by default " +
      "/workspace/<path>) so you can revise it there. Keeps an existing copy unless overwrite is true.",
    writes: true,
    resourceKey: "substrate:{path}",
  },
  resources_list_versions: {
    description:
      "List the immutable versions of a substrate file, newest first, with author, time and content hash.",
  },
  resources_read_version: {
    description: "Read one immutable version of a substrate file by versionId.",
  },
  resources_restore_version: {
    description:
      "Roll a substrate file back: the content of versionId becomes its new latest version (history kept). " +
      "Pass expectedVersionId or expectedContentHash to fail instead of overwriting a newer promotion. " +
      "Gated on the evaluator while an outcome is active.",
    // The reference's confirmation frontier is promotion alone: a restore only brings back content a
    // person already confirmed once, and the evaluator gate still holds it while an outcome is active.
    writes: true,
    resourceKey: "substrate",
  },
  resources_compare_with_substrate: {
    description:
      "Diff the workspace copy of a substrate file with the substrate's latest version: a unified diff, both " +
      "content hashes, latestVersionId and expectedContentHash to pass to resources_promote_to_substrate.",
  },
  resources_promote_to_substrate: {
    description:
      "Promote the workspace copy of a file into the shared substrate (/workspace/agent) as a new immutable " +
      "version that every later session of this agent sees. Pass expectedVersionId (or expectedContentHash) " +
      "from resources_compare_with_substrate. Needs confirmation; gated on the evaluator while an outcome is active.",
    writes: true,
    ask: true,
    resourceKey: "substrate:{path}",
  },
};

function definition(name: ResourceToolName): ToolDefinition {
  const t = traits[name];
  return managedTool({
    name,
    description: t.description,
    input: resourceToolInputs[name],
    permissionPolicy: t.ask ? "always_ask" : "always_allow",
    effects: t.writes ? ["write"] : ["read"],
    destructive: false,
    idempotent: true,
    interruptBehavior: "block",
    group: "resources",
    parallelism: { parallelSafe: !t.writes, ...(t.resourceKey ? { resourceKey: t.resourceKey } : {}) },
    availability: ["sandbox.ready"],
    executor: "sandbox",
  });
}

/** The resources_* tools, in a stable order. */
export const resourceTools: ToolDefinition[] = (Object.keys(traits) as ResourceToolName[]).map(definition);
