import type { ResourceToolName, resourceToolInputs, SubstrateVersion } from "@wakeloop/contracts";
import { SUBSTRATE_ROOT, WakeloopError } from "@wakeloop/contracts";
import {
  contentHash,
  listSubstrateVersions,
  readSubstrateFile,
  readSubstrateVersion,
  restoreSubstrateVersion,
  type SubstrateWriteResult,
  writeSubstrateFile,
} from "@wakeloop/db";
import { formatPatch, structuredPatch } from "diff";
import type { z } from "zod";
import { FINISHED_OUTPUT_CHARS, failure, ok, type ToolOutcome } from "./output-format";
import type { ToolContext } from "./tool-context";

// The resources_* tools (openboa "resources"): /workspace/agent is the agent's substrate, read-only in
// the sandbox and versioned in Postgres. Stage copies a file into the writable workspace, compare
// diffs the copy with the latest version, promote writes the copy back as a new version, restore
// rolls back to an old one; a write is followed by a sync of this runner's mirror, so the new version
// is at /workspace/agent at once here, and by a notice that makes the other runners sync theirs. Every write carries
// the tool call id, so a retried call returns the version it wrote instead of writing again.

type Input<K extends ResourceToolName> = z.output<(typeof resourceToolInputs)[K]>;
type Substrate = NonNullable<ToolContext["substrate"]>;

/** Refusals of the substrate store that the model can act on; anything else is our failure. */
const STORE_ERRORS = new Set([
  "substrate_version_conflict",
  "substrate_file_too_large",
  "substrate_full",
  "substrate_version_not_found",
]);

function withSubstrate(
  ctx: ToolContext,
  run: (substrate: Substrate) => Promise<ToolOutcome>,
): Promise<ToolOutcome> {
  if (ctx.substrate === null) {
    return Promise.resolve(
      failure(
        "substrate_unavailable",
        "this session's sandbox has no agent substrate mounted at /workspace/agent, so there is nothing to stage, compare or promote",
      ),
    );
  }
  return run(ctx.substrate).catch((error: unknown) => {
    if (error instanceof WakeloopError && STORE_ERRORS.has(error.code)) {
      return failure(error.code, error.message, (error.details as Record<string, unknown>) ?? {});
    }
    throw error;
  });
}

/** The tool's answer: its JSON as the text the model reads, and the same object as the result. */
function answer(result: Record<string, unknown>): ToolOutcome {
  return ok(JSON.stringify(result, null, 2), result);
}

function versionView(version: SubstrateVersion) {
  return {
    versionId: version.id,
    path: version.path,
    contentHash: version.content_hash,
    sizeBytes: version.size_bytes,
    restoredFromVersionId: version.restored_from_version_id,
    author: {
      kind: version.author.kind,
      sessionId: version.author.session_id,
      wakeId: version.author.wake_id,
      toolCallId: version.author.tool_call_id,
      apiKeyId: version.author.api_key_id ?? null,
    },
    createdAt: version.created_at,
  };
}

function notInSubstrate(path: string): ToolOutcome {
  return failure(
    "resource_not_found",
    `${path} is not in the agent's substrate; ls ${SUBSTRATE_ROOT} shows what is, and resources_promote_to_substrate adds a file`,
    { path },
  );
}

export function stageTool(ctx: ToolContext, input: Input<"resources_stage_from_substrate">) {
  return withSubstrate(ctx, async ({ mirror, scope }) => {
    const file = await readSubstrateFile(mirror.db, scope, input.path);
    if (file === null) return notInSubstrate(input.path);
    const workspacePath = input.workspacePath ?? input.path;
    const existing = await ctx.channel.call("fs.readRaw", { path: workspacePath, missingOk: true });
    const alreadyStaged = existing.exists && existing.content === file.content;
    if (existing.exists && !alreadyStaged && !input.overwrite) {
      return failure(
        "workspace_copy_exists",
        `${existing.path} already exists and differs from ${input.path}'s latest version; compare them with ` +
          "resources_compare_with_substrate, or stage with overwrite: true to replace your copy",
        { workspacePath: existing.path },
      );
    }
    const staged = alreadyStaged
      ? existing.path
      : (await ctx.channel.call("fs.write", { path: workspacePath, content: file.content })).path;
    return answer({
      path: input.path,
      workspacePath: staged,
      versionId: file.id,
      contentHash: file.content_hash,
      sizeBytes: file.size_bytes,
      alreadyStaged,
      nextStep: "edit the workspace copy, then resources_compare_with_substrate",
    });
  });
}

export function listVersionsTool(ctx: ToolContext, input: Input<"resources_list_versions">) {
  return withSubstrate(ctx, async ({ mirror, scope }) => {
    const versions = await listSubstrateVersions(mirror.db, scope, input.path, { limit: input.limit });
    if (versions.length === 0) return notInSubstrate(input.path);
    return answer({
      path: input.path,
      latestVersionId: versions[0]?.id ?? null,
      versions: versions.map(versionView),
    });
  });
}

export function readVersionTool(ctx: ToolContext, input: Input<"resources_read_version">) {
  return withSubstrate(ctx, async ({ mirror, scope }) => {
    const version = await readSubstrateVersion(mirror.db, scope, input.versionId);
    if (version === null) {
      return failure(
        "substrate_version_not_found",
        `${input.versionId} is not a version of this agent's substrate; resources_list_versions lists them`,
      );
    }
    return answer({ ...versionView(version), content: version.content });
  });
}

export function compareTool(ctx: ToolContext, input: Input<"resources_compare_with_substrate">) {
  return withSubstrate(ctx, async ({ mirror, scope }) => {
    const latest = await readSubstrateFile(mirror.db, scope, input.path);
    const copy = await ctx.channel.call("fs.readRaw", {
      path: input.workspacePath ?? input.path,
      missingOk: true,
    });
    if (latest === null && !copy.exists) {
      return failure(
        "resource_not_found",
        `neither the substrate nor the workspace has ${input.path}; stage it with resources_stage_from_substrate or write it first`,
      );
    }
    const substrateText = latest?.content ?? "";
    const workspaceText = copy.exists ? copy.content : "";
    const patch = structuredPatch(
      `${SUBSTRATE_ROOT}/${input.path}`,
      copy.path,
      substrateText,
      workspaceText,
      latest === null ? "(not in the substrate)" : latest.id,
      copy.exists ? "(workspace copy)" : "(no workspace copy)",
    );
    const lines = patch.hunks.flatMap((hunk) => hunk.lines);
    const full = patch.hunks.length === 0 ? "" : formatPatch(patch);
    const diff =
      full.length > FINISHED_OUTPUT_CHARS
        ? `${full.slice(0, FINISHED_OUTPUT_CHARS)}\n[diff cut at ${FINISHED_OUTPUT_CHARS} characters of ${full.length}]`
        : full;
    const substrateContentHash = latest?.content_hash ?? null;
    return answer({
      path: input.path,
      workspacePath: copy.path,
      substrateExists: latest !== null,
      workspaceExists: copy.exists,
      identical: latest !== null && copy.exists && substrateText === workspaceText,
      substrateContentHash,
      workspaceContentHash: copy.exists ? contentHash(workspaceText) : null,
      latestVersionId: latest?.id ?? null,
      latestVersion: latest === null ? null : versionView(latest),
      expectedContentHash: substrateContentHash,
      additions: lines.filter((line) => line.startsWith("+")).length,
      deletions: lines.filter((line) => line.startsWith("-")).length,
      diff,
      nextStep:
        latest === null
          ? "resources_promote_to_substrate adds the file"
          : `resources_promote_to_substrate with expectedVersionId "${latest.id}"`,
    });
  });
}

export function promoteTool(ctx: ToolContext, input: Input<"resources_promote_to_substrate">) {
  return withSubstrate(ctx, async ({ mirror, scope, author }) => {
    const copy = await ctx.channel.call("fs.readRaw", {
      path: input.workspacePath ?? input.path,
      missingOk: true,
    });
    if (!copy.exists) {
      return failure(
        "workspace_copy_missing",
        `${copy.path} does not exist; stage ${input.path} with resources_stage_from_substrate and edit it first`,
      );
    }
    const written = await writeSubstrateFile(
      mirror.db,
      scope,
      {
        path: input.path,
        content: copy.content,
        ...(input.expectedVersionId !== undefined && { expectedVersionId: input.expectedVersionId }),
        ...(input.expectedContentHash !== undefined && { expectedContentHash: input.expectedContentHash }),
        author,
      },
      mirror.limits,
    );
    await mirror.changed(scope);
    return promoted(written, copy.path);
  });
}

export function restoreTool(ctx: ToolContext, input: Input<"resources_restore_version">) {
  return withSubstrate(ctx, async ({ mirror, scope, author }) => {
    const written = await restoreSubstrateVersion(
      mirror.db,
      scope,
      {
        versionId: input.versionId,
        ...(input.expectedVersionId !== undefined && { expectedVersionId: input.expectedVersionId }),
        ...(input.expectedContentHash !== undefined && { expectedContentHash: input.expectedContentHash }),
        author,
      },
      mirror.limits,
    );
    await mirror.changed(scope);
    return promoted(written, null);
  });
}

function promoted(written: SubstrateWriteResult, workspacePath: string | null): ToolOutcome {
  return answer({
    ...versionView(written.version),
    ...(workspacePath !== null && { workspacePath }),
    previousVersionId: written.previousVersionId,
    substratePath: `${SUBSTRATE_ROOT}/${written.version.path}`,
    replayed: written.replayed,
  });
}
