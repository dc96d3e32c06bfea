// File actions, all through resolvePath so every path stays inside the mounted roots.
import fs from "node:fs";
import path from "node:path";
import type {
  AgentDirEntry,
  AgentFsArgs,
  AgentGlobArgs,
  AgentGlobResult,
  AgentListArgs,
  AgentListResult,
  AgentRawFile,
  AgentReadArgs,
  AgentReadRawArgs,
  AgentReadResult,
  AgentStatResult,
  AgentWriteArgs,
  AgentWriteResult,
} from "@wakeloop/contracts";
import { AgentError } from "./errors";
import { globToRegExp } from "./glob";
import { isReadOnly, openChecked, type ResolvedExisting, resolvePath } from "./paths";

const MAX_READ_BYTES = 64 * 1024 * 1024;
const MAX_LIST_ENTRIES = 2_000;
const MAX_GLOB_VISITS = 200_000;

function readChecked(resolved: ResolvedExisting, input: string): Buffer {
  if (resolved.stat.isDirectory()) throw new AgentError("is_a_directory", `${input} is a directory; use ls`);
  if (resolved.stat.size > MAX_READ_BYTES) {
    throw new AgentError(
      "file_too_large",
      `${input} has ${resolved.stat.size} bytes; the limit is ${MAX_READ_BYTES}`,
    );
  }
  const fd = openChecked(resolved, fs.constants.O_RDONLY);
  try {
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function decodeText(buffer: Buffer, input: string): string {
  if (buffer.subarray(0, 8_192).includes(0)) {
    throw new AgentError("file_is_binary", `${input} looks binary (it contains NUL bytes)`);
  }
  return buffer.toString("utf8");
}

/** Lines [offset, offset+limit) of a text file, 1-based, with the file's line count. */
export function read({ path: input, cwd, offset = 1, limit }: AgentReadArgs): AgentReadResult {
  const resolved = resolvePath(input, { cwd });
  const text = decodeText(readChecked(resolved, input), input);
  const lines = text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const selected = lines.slice(offset - 1, limit === undefined ? undefined : offset - 1 + limit);
  return { path: resolved.path, totalLineCount: lines.length, startLine: offset, lines: selected };
}

/** A whole text file (for edit and apply_patch, which change it on the runner side). */
export function readRaw({ path: input, cwd, missingOk = false }: AgentReadRawArgs): AgentRawFile {
  const resolved = resolvePath(input, { cwd, mode: missingOk ? "write" : "read" });
  if (resolved.stat === null) return { path: resolved.path, exists: false, content: "" };
  const existing = { path: resolved.path, stat: resolved.stat };
  return { path: resolved.path, exists: true, content: decodeText(readChecked(existing, input), input) };
}

export function write({ path: input, cwd, content, append = false }: AgentWriteArgs): AgentWriteResult {
  const resolved = resolvePath(input, { cwd, mode: "write" });
  if (resolved.stat?.isDirectory()) throw new AgentError("is_a_directory", `${input} is a directory`);
  fs.mkdirSync(path.dirname(resolved.path), { recursive: true });
  const { O_WRONLY, O_CREAT, O_EXCL, O_TRUNC, O_APPEND } = fs.constants;
  const flags =
    resolved.stat === null ? O_WRONLY | O_CREAT | O_EXCL : O_WRONLY | (append ? O_APPEND : O_TRUNC);
  const fd = openChecked(resolved, flags);
  try {
    fs.writeFileSync(fd, content);
  } finally {
    fs.closeSync(fd);
  }
  return { path: resolved.path, created: resolved.stat === null, bytes: Buffer.byteLength(content) };
}

/** Removes a file (apply_patch deleting a file). */
export function remove({ path: input, cwd }: AgentFsArgs): { path: string } {
  const resolved = resolvePath(input, { cwd, mode: "write" });
  if (resolved.stat?.isDirectory()) throw new AgentError("is_a_directory", `${input} is a directory`);
  fs.rmSync(resolved.path, { force: true });
  return { path: resolved.path };
}

function typeOf(stat: fs.Stats): AgentDirEntry["type"] {
  if (stat.isFile()) return "file";
  if (stat.isDirectory()) return "dir";
  if (stat.isSymbolicLink()) return "symlink";
  return "other";
}

function describeEntry(dir: string, name: string): AgentDirEntry {
  const stat = fs.lstatSync(path.join(dir, name));
  const entry: AgentDirEntry = { name, type: typeOf(stat), size: stat.size, mtime: stat.mtime.toISOString() };
  if (entry.type === "symlink") entry.target = fs.readlinkSync(path.join(dir, name));
  return entry;
}

export function list({ path: input = ".", cwd, all = false }: AgentListArgs): AgentListResult {
  const resolved = resolvePath(input, { cwd });
  if (!resolved.stat.isDirectory()) throw new AgentError("not_a_directory", `${input} is not a directory`);
  const names = fs
    .readdirSync(resolved.path)
    .filter((name) => all || !name.startsWith("."))
    .sort();
  const entries: AgentDirEntry[] = [];
  for (const name of names.slice(0, MAX_LIST_ENTRIES)) {
    try {
      entries.push(describeEntry(resolved.path, name));
    } catch {
      // removed while listing
    }
  }
  return { path: resolved.path, entries, total: names.length, truncated: names.length > MAX_LIST_ENTRIES };
}

export function stat({ path: input, cwd }: AgentFsArgs): AgentStatResult {
  const resolved = resolvePath(input, { cwd });
  const s = resolved.stat;
  return {
    path: resolved.path,
    type: typeOf(s),
    size: s.size,
    mode: `0${(s.mode & 0o7777).toString(8)}`,
    mtime: s.mtime.toISOString(),
    readOnly: isReadOnly(resolved.path),
  };
}

export function mkdir({ path: input, cwd }: AgentFsArgs): { path: string; created: boolean } {
  const resolved = resolvePath(input, { cwd, mode: "write" });
  fs.mkdirSync(resolved.path, { recursive: true });
  return { path: resolved.path, created: resolved.stat === null };
}

/** Entries under `path` whose path relative to it matches `pattern`; does not follow symlinks. */
export function glob({
  path: input = ".",
  cwd,
  pattern,
  kind = "any",
  limit = 500,
}: AgentGlobArgs): AgentGlobResult {
  const root = resolvePath(input, { cwd });
  if (!root.stat.isDirectory()) throw new AgentError("not_a_directory", `${input} is not a directory`);
  const matcher = globToRegExp(pattern);
  const matches: string[] = [];
  const stack = [""];
  let visited = 0;
  let truncated = false;
  for (let relDir = stack.pop(); relDir !== undefined && !truncated; relDir = stack.pop()) {
    let dirents: fs.Dirent[];
    try {
      dirents = fs.readdirSync(path.join(root.path, relDir), { withFileTypes: true });
    } catch {
      continue;
    }
    for (const dirent of dirents) {
      visited += 1;
      const rel = relDir === "" ? dirent.name : `${relDir}/${dirent.name}`;
      const isDir = dirent.isDirectory();
      if (isDir && dirent.name !== ".git") stack.push(rel);
      const wanted = kind === "any" || (kind === "dir" ? isDir : dirent.isFile());
      if (wanted && matcher.test(rel)) {
        matches.push(isDir ? `${rel}/` : rel);
        if (matches.length >= limit) truncated = true;
      }
      if (visited >= MAX_GLOB_VISITS) truncated = true;
      if (truncated) break;
    }
  }
  matches.sort();
  return { path: root.path, matches, truncated };
}
