import type { EditInput, GlobInput, LsInput, ReadInput, WriteInput } from "@wakeloop/contracts";
import { failure, ok, type ToolOutcome } from "./output-format";
import type { ToolContext } from "./tool-context";

const DEFAULT_READ_LINES = 2_000;
/** One read page stays under this many characters (about 12k tokens), whatever the line count. */
const READ_PAGE_CHARS = 50_000;

export async function readTool(ctx: ToolContext, input: ReadInput): Promise<ToolOutcome> {
  const offset = input.offset ?? 1;
  const limit = input.limit ?? DEFAULT_READ_LINES;
  const file = await ctx.channel.call("fs.read", { path: input.path, offset, limit });
  if (file.totalLineCount > 0 && offset > file.totalLineCount) {
    return failure(
      "offset_past_end",
      `${input.path} has ${file.totalLineCount} lines; offset ${offset} is past the end`,
    );
  }
  const shown: string[] = [];
  let chars = 0;
  let cutLine = false;
  for (const [index, line] of file.lines.entries()) {
    const numbered = `${String(offset + index).padStart(6)}\t${line}`;
    if (chars + numbered.length > READ_PAGE_CHARS) {
      if (shown.length === 0) {
        shown.push(`${numbered.slice(0, READ_PAGE_CHARS)}`);
        cutLine = true;
      }
      break;
    }
    shown.push(numbered);
    chars += numbered.length + 1;
  }
  const selectedLineCount = shown.length;
  const endLine = offset + selectedLineCount - 1;
  const truncated = endLine < file.totalLineCount || cutLine;
  let text = file.totalLineCount === 0 ? "(empty file)" : shown.join("\n");
  if (cutLine) {
    text += `\n[line ${offset} is longer than ${READ_PAGE_CHARS} characters and was cut; use grep or bash \`head -c\` for it]`;
  }
  if (endLine < file.totalLineCount) {
    text +=
      `\n[Showing lines ${offset}-${endLine} of ${file.totalLineCount}. ` +
      `Continue with read ${JSON.stringify({ path: input.path, offset: endLine + 1 })}.]`;
  }
  return ok(text, {
    path: file.path,
    totalLineCount: file.totalLineCount,
    selectedLineCount,
    startLine: offset,
    endLine,
    truncated,
  });
}

export async function writeTool(ctx: ToolContext, input: WriteInput): Promise<ToolOutcome> {
  const result = await ctx.channel.call("fs.write", {
    path: input.path,
    content: input.content,
  });
  return ok(`${result.created ? "Created" : "Overwrote"} ${result.path} (${result.bytes} bytes)`, result);
}

export async function appendTool(ctx: ToolContext, input: WriteInput): Promise<ToolOutcome> {
  const result = await ctx.channel.call("fs.write", {
    path: input.path,
    content: input.content,
    append: true,
  });
  return ok(`Appended ${result.bytes} bytes to ${result.path}`, result);
}

function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length))
    count += 1;
  return count;
}

export async function editTool(ctx: ToolContext, input: EditInput): Promise<ToolOutcome> {
  if (input.old_string === input.new_string) {
    return failure("edit_no_change", "old_string and new_string are the same");
  }
  const file = await ctx.channel.call("fs.readRaw", { path: input.path });
  const count = countOccurrences(file.content, input.old_string);
  if (count === 0) {
    return failure(
      "edit_no_match",
      `old_string was not found in ${input.path}; read the file and copy the text exactly`,
    );
  }
  if (count > 1 && !input.replace_all) {
    return failure(
      "edit_not_unique",
      `old_string matches ${count} times in ${input.path}; add surrounding lines to make it unique or set replace_all`,
      { matches: count },
    );
  }
  const content = input.replace_all
    ? file.content.split(input.old_string).join(input.new_string)
    : file.content.replace(input.old_string, () => input.new_string);
  await ctx.channel.call("fs.write", { path: input.path, content });
  return ok(`Edited ${file.path}: ${count} replacement${count === 1 ? "" : "s"}`, {
    path: file.path,
    replacements: count,
  });
}

export async function lsTool(ctx: ToolContext, input: LsInput): Promise<ToolOutcome> {
  const result = await ctx.channel.call("fs.list", { path: input.path ?? ".", all: input.all });
  const lines = result.entries.map((entry) => {
    if (entry.type === "dir") return `${entry.name}/`;
    if (entry.type === "symlink") return `${entry.name} -> ${entry.target ?? "?"}`;
    return `${entry.name}  (${entry.size} bytes)`;
  });
  let text = lines.length > 0 ? lines.join("\n") : "(empty directory)";
  if (result.truncated)
    text += `\n[showing ${result.entries.length} of ${result.total} entries; use glob to narrow]`;
  return ok(text, result);
}

export async function globTool(ctx: ToolContext, input: GlobInput): Promise<ToolOutcome> {
  const result = await ctx.channel.call("fs.glob", {
    path: input.path ?? ".",
    pattern: input.pattern,
    kind: input.kind,
    limit: input.limit,
  });
  let text = result.matches.length > 0 ? result.matches.join("\n") : "No matches";
  if (result.truncated)
    text += `\n[stopped after ${result.matches.length} matches; narrow the pattern or path]`;
  return ok(text, { path: result.path, count: result.matches.length, truncated: result.truncated });
}
