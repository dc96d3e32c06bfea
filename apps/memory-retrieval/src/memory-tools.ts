import {
  LEARNINGS_STORE,
  LearningListInput,
  MemoryListInput,
  MemoryListVersionsInput,
  MemoryPromoteNoteInput,
  MemoryReadInput,
  MemoryReadVersionInput,
  MemorySearchInput,
  type MemoryToolName,
  type MemoryVersion,
  MemoryWriteInput,
  NOTEPAD_STORE,
  SHARED_MEMORY_TARGET,
  SKILLS_STORE,
  WakeloopError,
  WORKSPACE_MEMORY,
  WORKSPACE_MEMORY_NOTES,
} from "@wakeloop/contracts";
import {
  listMemoryEntries,
  listMemoryStores,
  listMemoryVersions,
  lockMemoryStore,
  readMemoryEntry,
  readMemoryVersion,
  writeMemory,
} from "@wakeloop/db";
import { runNotepadTool } from "./notepad-tools";
import { NOT_RETRIEVED, runRetrievalTool, search } from "./retrieval-tools";
import { runSkillTool } from "./skill-tools";
import { notFound, parseInput, type ToolCall } from "./tool-call";

/** Stores that belong to their own tools: memory_write refuses them, memory_search skips them. */
const OWN_TOOL_STORES = [SKILLS_STORE, NOTEPAD_STORE, LEARNINGS_STORE];

const STORE_ROLES: Record<string, string> = {
  [WORKSPACE_MEMORY]: "shared MEMORY.md of the agent; changed only through memory_promote_note",
  [WORKSPACE_MEMORY_NOTES]: "managed notes of the agent, written with memory_write",
  [SKILLS_STORE]: "skills (skills_* tools)",
  [NOTEPAD_STORE]: "session notepads (notepad tools)",
  [LEARNINGS_STORE]: "learnings captured by the runtime (learning_list)",
};

/** A version as a listing shows it: everything but the content, with a short preview. */
export function versionSummary(version: MemoryVersion) {
  const { content, ...rest } = version;
  return { ...rest, preview: content.slice(0, 200) };
}

function written(version: MemoryVersion) {
  return {
    store: version.store,
    target: version.target,
    version_id: version.id,
    content_hash: version.content_hash,
    size_bytes: version.size_bytes,
  };
}

/** Runs one memory tool in `call.db` (the transaction its idempotency record commits in, for writes). */
export async function runMemoryTool(call: ToolCall, tool: MemoryToolName): Promise<Record<string, unknown>> {
  const { db, scope } = call;
  switch (tool) {
    case "memory_list": {
      const { store } = parseInput(MemoryListInput, call.input, tool);
      if (store !== undefined) {
        const entries = await listMemoryEntries(db, scope, store, { limit: 200 });
        return { store, entries: entries.map(({ content, ...entry }) => entry) };
      }
      const stores = await listMemoryStores(db, scope);
      const named = new Map(stores.map((summary) => [summary.store, summary]));
      for (const builtin of [WORKSPACE_MEMORY, WORKSPACE_MEMORY_NOTES]) {
        if (!named.has(builtin)) named.set(builtin, { store: builtin, entries: 0, bytes: 0 });
      }
      return {
        stores: [...named.values()]
          .sort((a, b) => a.store.localeCompare(b.store))
          .map((summary) => ({ ...summary, role: STORE_ROLES[summary.store] ?? "named store" })),
        limits: call.limits,
      };
    }
    case "memory_read": {
      const { store, target } = parseInput(MemoryReadInput, call.input, tool);
      const entry = await readMemoryEntry(db, scope, store, target);
      if (entry === null) throw notFound(`${store}/${target}`, "memory_list shows what the store holds");
      return { ...entry };
    }
    case "memory_write": {
      const input = parseInput(MemoryWriteInput, call.input, tool);
      if (input.store === WORKSPACE_MEMORY) {
        throw new WakeloopError(
          "memory_store_read_only",
          "workspace_memory is shared by every session of the agent: use memory_promote_note to change it",
        );
      }
      if (OWN_TOOL_STORES.includes(input.store)) {
        throw new WakeloopError(
          "memory_store_read_only",
          `store ${input.store} is kept by its own tools (${STORE_ROLES[input.store]})`,
        );
      }
      await lockMemoryStore(db, scope, input.store);
      let content = input.content;
      if (input.mode === "append") {
        const current = await readMemoryEntry(db, scope, input.store, input.target);
        if (current !== null) content = `${current.content}\n${input.content}`;
      }
      const version = await writeMemory(
        db,
        scope,
        {
          store: input.store,
          target: input.target,
          content,
          ...(input.expected_version_id !== undefined && { expectedVersionId: input.expected_version_id }),
          author: call.author,
        },
        call.limits,
      );
      return written(version);
    }
    case "memory_list_versions": {
      const { store, target, limit } = parseInput(MemoryListVersionsInput, call.input, tool);
      const versions = await listMemoryVersions(db, scope, store, target, { limit });
      return { store, target, versions: versions.map(versionSummary) };
    }
    case "memory_read_version": {
      const { version_id } = parseInput(MemoryReadVersionInput, call.input, tool);
      const version = await readMemoryVersion(db, scope, version_id);
      if (version === null)
        throw notFound(`version ${version_id}`, "memory_list_versions lists an entry's versions");
      return { ...version };
    }
    case "memory_search": {
      const { query, stores, limit } = parseInput(MemorySearchInput, call.input, tool);
      const found = await search(call, {
        query,
        limit,
        memory: stores ? { stores } : { excludeStores: NOT_RETRIEVED },
        events: null,
        spans: null,
      });
      return { query, ...found };
    }
    case "memory_promote_note": {
      const input = parseInput(MemoryPromoteNoteInput, call.input, tool);
      await lockMemoryStore(db, scope, WORKSPACE_MEMORY);
      const current = await readMemoryEntry(db, scope, WORKSPACE_MEMORY, SHARED_MEMORY_TARGET);
      const content =
        input.mode === "append" && current !== null ? `${current.content}\n\n${input.note}` : input.note;
      const version = await writeMemory(
        db,
        scope,
        {
          store: WORKSPACE_MEMORY,
          target: SHARED_MEMORY_TARGET,
          content,
          ...(input.expected_version_id !== undefined && { expectedVersionId: input.expected_version_id }),
          author: call.author,
        },
        call.limits,
      );
      return written(version);
    }
    case "learning_list": {
      const { limit } = parseInput(LearningListInput, call.input, tool);
      const learnings = await listMemoryEntries(db, scope, LEARNINGS_STORE, { limit, newestFirst: true });
      return {
        learnings: learnings.map((entry) => ({
          key: entry.target,
          text: entry.content,
          version_id: entry.version_id,
          captured_at: entry.updated_at,
          ...entry.metadata,
        })),
        next_step: "promote a durable one into MEMORY.md with memory_promote_note",
      };
    }
    case "skills_list":
    case "skills_search":
    case "skills_read":
    case "create_skill":
    case "update_skill":
    case "delete_skill":
    case "enable_skill":
    case "disable_skill":
      return runSkillTool(call, tool);
    case "retrieval_search":
    case "session_search_context":
    case "session_search_traces":
      return runRetrievalTool(call, tool);
    case "read_notepad":
    case "write_notepad":
    case "update_notepad":
      return runNotepadTool(call, tool);
  }
}
