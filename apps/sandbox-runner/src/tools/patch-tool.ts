import type { AgentRawFile, ApplyPatchInput } from "@wakeloop/contracts";
import { applyPatch, parsePatch, type StructuredPatch } from "diff";
import { failure, ok, type ToolOutcome } from "./output-format";
import type { ToolContext } from "./tool-context";

/** `a/src/x.ts` → `src/x.ts`; `/dev/null` means the file does not exist on that side. */
function patchPath(name: string | undefined): string | null {
  if (name === undefined || name === "/dev/null") return null;
  const trimmed = name.split("\t")[0]?.trim() ?? "";
  return trimmed.replace(/^[ab]\//, "");
}

type Change = { path: string; action: "create" | "update" | "delete"; content: string };

/**
 * Applies a unified diff with the `diff` package on the runner side: every file is read and every
 * hunk applied in memory first, and only when all of them apply are the files written.
 */
export async function applyPatchTool(ctx: ToolContext, input: ApplyPatchInput): Promise<ToolOutcome> {
  let patches: StructuredPatch[];
  try {
    patches = parsePatch(input.patch);
  } catch (error) {
    return failure("patch_invalid", (error as Error).message);
  }
  patches = patches.filter((p) => p.hunks.length > 0 || p.oldFileName !== p.newFileName);
  if (patches.length === 0)
    return failure("patch_invalid", "no file changes found; give ---/+++ headers and @@ hunks");

  const changes: Change[] = [];
  for (const patch of patches) {
    const oldPath = patchPath(patch.oldFileName);
    const newPath = patchPath(patch.newFileName);
    const target = newPath ?? oldPath;
    if (target === null) return failure("patch_invalid", "a file section has neither an old nor a new name");
    const original =
      oldPath === null
        ? ({ path: target, exists: false, content: "" } satisfies Omit<AgentRawFile, "path"> & {
            path: string;
          })
        : await ctx.channel.call("fs.readRaw", { path: oldPath });
    const patched = applyPatch(original.content, patch);
    if (patched === false) {
      return failure(
        "patch_does_not_apply",
        `the hunks for ${target} do not match its current content; read it and rebuild the diff`,
      );
    }
    if (newPath === null) changes.push({ path: oldPath as string, action: "delete", content: "" });
    else changes.push({ path: newPath, action: oldPath === null ? "create" : "update", content: patched });
    if (oldPath !== null && newPath !== null && oldPath !== newPath) {
      changes.push({ path: oldPath, action: "delete", content: "" });
    }
  }

  const done: string[] = [];
  for (const change of changes) {
    if (change.action === "delete") {
      await ctx.channel.call("fs.remove", { path: change.path });
    } else {
      await ctx.channel.call("fs.write", { path: change.path, content: change.content });
    }
    done.push(`${change.action} ${change.path}`);
  }
  return ok(`Applied patch:\n${done.join("\n")}`, {
    files: changes.map(({ path, action }) => ({ path, action })),
  });
}
