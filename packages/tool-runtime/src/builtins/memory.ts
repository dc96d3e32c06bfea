import { type MemoryToolName, memoryToolInputs, type ToolDefinition } from "@wakeloop/contracts";
import { managedTool } from "./define";

// Tools executed by the memory-retrieval service (executor "memory"), offered only while it answers
// (`memory.ready`). The service keys every write by the tool call id, so a call whose outcome a crash
// left unknown is safe to send again: all of them are idempotent.

type Traits = {
  description: string;
  /** Changes a store; reads are parallel-safe. */
  writes?: boolean;
  destructive?: boolean;
  /** Writes shared agent-level memory: a person confirms unless the agent's policy says otherwise. */
  ask?: boolean;
  resourceKey?: string;
};

const traits: Record<MemoryToolName, Traits> = {
  memory_list: {
    description:
      "List the agent's memory stores (workspace_memory, workspace_memory_notes, named stores) with entry " +
      "counts, or the entries of one store with their current version ids.",
  },
  memory_read: {
    description: "Read one memory entry (store + target) with its current version id.",
  },
  memory_write: {
    description:
      "Write (replace or append) one entry of workspace_memory_notes or a named store. Each write creates an " +
      "immutable version; pass expected_version_id from memory_read to fail instead of overwriting a newer write.",
    writes: true,
    resourceKey: "memory:{target}",
  },
  memory_list_versions: {
    description: "List an entry's immutable versions, newest first, with author, time and content hash.",
  },
  memory_read_version: {
    description: "Read one past version of a memory entry by its version id.",
  },
  memory_search: {
    description:
      "Search the agent's memory (all stores or some) with web search syntax; falls back to fuzzy matching for " +
      "identifiers; similar wording too when embeddings are on. Hits are hints with a snippet and why they " +
      "ranked: re-read the entry with memory_read before relying on it.",
  },
  memory_promote_note: {
    description:
      "Promote a durable note into the agent's shared MEMORY.md (workspace_memory), which every later session " +
      "of this agent reads. Needs confirmation.",
    writes: true,
    ask: true,
    resourceKey: "memory:MEMORY.md",
  },
  learning_list: {
    description:
      "List durable learnings the runtime captured from earlier wakes of this agent; promote one with " +
      "memory_promote_note. To record one, state it in your reply inside <learning>...</learning> (a fix " +
      "that worked, a pitfall, a preference later sessions should know); the runtime keeps each once.",
  },
  retrieval_search: {
    description:
      "Search this agent's memory and the messages and tool calls of its other sessions at once (web search " +
      "syntax; identifiers match fuzzily; similar wording too when embeddings are on). Hits from sessions " +
      "with your setup, outcome or lineage rank a little higher. Each hit gives its source, a snippet, why it " +
      "ranked and the tool to reread it with: hits are candidates, reread before relying on one.",
  },
  session_search_context: {
    description:
      "Search the messages, tool calls and tool results of this agent's other sessions (or one session); " +
      "each hit names the session and seq to reread with session_get_events.",
  },
  session_search_traces: {
    description:
      "Find spans of this agent's wakes (model calls, tool calls, errors, with durations) holding every word " +
      "of the query, e.g. 'bash error'; reread a hit's wake with session_get_trace.",
  },
  skills_list: {
    description:
      "List the agent's skills (name, one-line description, enabled) with a preview; read one with skills_read.",
  },
  skills_search: {
    description:
      "Search enabled skills by name, description and body (similar wording too when embeddings are on); " +
      "read a hit with skills_read.",
  },
  skills_read: { description: "Read a skill's full procedure by name." },
  create_skill: {
    description:
      "Create a named skill: a reusable procedure with a one-line description that appears in the skills index " +
      "of every later wake of this agent.",
    writes: true,
    resourceKey: "skills:{name}",
  },
  update_skill: {
    description: "Change a skill's description or content; creates a new version.",
    writes: true,
    resourceKey: "skills:{name}",
  },
  delete_skill: {
    description: "Delete a skill (its versions stay readable in the history).",
    writes: true,
    destructive: true,
    resourceKey: "skills:{name}",
  },
  enable_skill: {
    description: "Enable a disabled skill so it is listed in the skills index again.",
    writes: true,
    resourceKey: "skills:{name}",
  },
  disable_skill: {
    description: "Disable a skill without deleting it: it leaves the skills index and skills_search.",
    writes: true,
    resourceKey: "skills:{name}",
  },
  read_notepad: { description: "Read this session's notepad with its current version id." },
  write_notepad: {
    description: "Replace this session's notepad content (scratch notes kept across wakes of the session).",
    writes: true,
    destructive: true,
    resourceKey: "notepad",
  },
  update_notepad: {
    description:
      "Edit this session's notepad in place: find_replace (find, text), append (text), prepend (text) or " +
      "delete (find). find must match exactly once.",
    writes: true,
    resourceKey: "notepad",
  },
};

function definition(name: MemoryToolName): ToolDefinition {
  const t = traits[name];
  return managedTool({
    name,
    description: t.description,
    input: memoryToolInputs[name],
    permissionPolicy: t.ask ? "always_ask" : "always_allow",
    effects: t.writes ? ["write"] : ["read"],
    destructive: t.destructive ?? false,
    idempotent: true,
    interruptBehavior: "block",
    group: "memory",
    parallelism: { parallelSafe: !t.writes, ...(t.resourceKey ? { resourceKey: t.resourceKey } : {}) },
    availability: ["memory.ready"],
    executor: "memory",
  });
}

/** The tools executed by the memory service, in a stable order. */
export const memoryTools: ToolDefinition[] = (Object.keys(traits) as MemoryToolName[]).map(definition);
