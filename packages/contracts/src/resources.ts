import { z } from "zod";
import { Id, Timestamp } from "./ids";
import { MemoryAuthor } from "./memory";

// The agent's versioned substrate (openboa "resources"): files shared by every session of an agent,
// mounted read-only at /workspace/agent, changed only by promoting a workspace copy (or restoring a
// version) through the resources_* tools or the API. Tool inputs and outputs use the reference's names
// (`versionId`, `expectedVersionId`, `expectedContentHash`, `latestVersionId`); API bodies are
// snake_case like the rest of the API.

/** Where the substrate is mounted in every sandbox of the agent. */
export const SUBSTRATE_ROOT = "/workspace/agent";

const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$/;

/**
 * A substrate file: a relative path of 1-8 segments of letters, digits, `.`, `_` and `-` (no segment
 * starts with `.` or `-`, so no `..`, no hidden files, no option-like names). A path given under
 * /workspace/agent/ is taken relative to it. The runner writes these paths on its host, so they are
 * strict by construction rather than checked against a filesystem.
 */
export const ResourcePath = z
  .string()
  .trim()
  .min(1)
  .max(512)
  .transform((path) => (path.startsWith(`${SUBSTRATE_ROOT}/`) ? path.slice(SUBSTRATE_ROOT.length + 1) : path))
  .refine((path) => {
    const segments = path.split("/");
    return segments.length <= 8 && segments.every((segment) => SEGMENT.test(segment));
  }, "a substrate path is relative to /workspace/agent: 1-8 segments of letters, digits, '.', '_' and '-', none starting with '.' or '-' (e.g. notes/guide.md)")
  .describe("Substrate file, relative to /workspace/agent (e.g. notes/guide.md)");
export type ResourcePath = z.output<typeof ResourcePath>;

export const ResourceVersionId = z
  .string()
  .min(1)
  .max(128)
  .describe("A version id from resources_list_versions");

const WorkspacePath = z
  .string()
  .min(1)
  .max(1_024)
  .optional()
  .describe("The workspace copy, relative to /workspace or absolute under it; default: the substrate path");
const ExpectedVersionId = ResourceVersionId.optional().describe(
  "Write only if the substrate file's latest version is this one (latestVersionId from " +
    "resources_compare_with_substrate); a stale id fails with a conflict and writes nothing",
);
const ExpectedContentHash = z
  .string()
  .regex(/^sha256:[0-9a-f]{64}$/, "a content hash looks like sha256:<64 hex>")
  .optional()
  .describe(
    "Write only if the substrate file's current content has this hash (expectedContentHash from compare)",
  );

export const ResourcesStageInput = z.object({
  path: ResourcePath,
  workspacePath: WorkspacePath,
  overwrite: z
    .boolean()
    .default(false)
    .describe("Replace an existing workspace copy (its edits are lost); by default an existing copy is kept"),
});
export const ResourcesListVersionsInput = z.object({
  path: ResourcePath,
  limit: z.number().int().min(1).max(100).default(20),
});
export const ResourcesReadVersionInput = z.object({ versionId: ResourceVersionId });
export const ResourcesRestoreVersionInput = z.object({
  versionId: ResourceVersionId.describe(
    "The version whose content becomes the substrate file's new latest version",
  ),
  expectedVersionId: ExpectedVersionId,
  expectedContentHash: ExpectedContentHash,
});
export const ResourcesCompareInput = z.object({ path: ResourcePath, workspacePath: WorkspacePath });
export const ResourcesPromoteInput = z.object({
  path: ResourcePath,
  workspacePath: WorkspacePath,
  expectedVersionId: ExpectedVersionId,
  expectedContentHash: ExpectedContentHash,
});

/** The resources tools (executed by the sandbox runner) and the schema each input must satisfy. */
export const resourceToolInputs = {
  resources_stage_from_substrate: ResourcesStageInput,
  resources_list_versions: ResourcesListVersionsInput,
  resources_read_version: ResourcesReadVersionInput,
  resources_restore_version: ResourcesRestoreVersionInput,
  resources_compare_with_substrate: ResourcesCompareInput,
  resources_promote_to_substrate: ResourcesPromoteInput,
} as const;
export type ResourceToolName = keyof typeof resourceToolInputs;

// ---- Stored versions, as the API shows them -------------------------------------------------------

/** One immutable version of a substrate file; `restored_from_version_id` when a restore wrote it. */
export const SubstrateVersion = z.object({
  id: Id,
  path: z.string(),
  content_hash: z.string(),
  size_bytes: z.number().int(),
  restored_from_version_id: Id.nullable(),
  author: MemoryAuthor,
  created_at: Timestamp,
});
export type SubstrateVersion = z.infer<typeof SubstrateVersion>;

export const SubstrateVersionWithContent = SubstrateVersion.extend({ content: z.string() });
export type SubstrateVersionWithContent = z.infer<typeof SubstrateVersionWithContent>;

/** A substrate file and its latest version. */
export const SubstrateFile = z.object({
  path: z.string(),
  version_id: Id,
  content_hash: z.string(),
  size_bytes: z.number().int(),
  updated_at: Timestamp,
});
export type SubstrateFile = z.infer<typeof SubstrateFile>;

// ---- API for people: /v1/agents/{id}/resources… ---------------------------------------------------

export const SubstrateFileList = z.object({
  data: z.array(SubstrateFile),
  /** Bytes of every file's latest version, and the most the agent may hold. */
  total_bytes: z.number().int(),
  max_agent_bytes: z.number().int(),
});
export type SubstrateFileList = z.infer<typeof SubstrateFileList>;

export const SubstrateVersionList = z.object({ data: z.array(SubstrateVersion) });
export type SubstrateVersionList = z.infer<typeof SubstrateVersionList>;

/** A person's rollback: the version's content becomes the file's new latest version. */
export const RestoreResourceRequest = z.strictObject({
  version_id: Id,
  /** Restore only over this latest version; a stale one is a 409. */
  expected_version_id: Id.optional(),
});
export type RestoreResourceRequest = z.infer<typeof RestoreResourceRequest>;
