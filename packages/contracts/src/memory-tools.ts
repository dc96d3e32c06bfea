import { z } from "zod";

// Inputs of the model-facing tools the memory service executes (memory, learnings, skills, notepad).
// The tool runtime turns them into ToolDefinitions; the memory service validates every call against
// the same schemas.

/** A store name: `workspace_memory`, `workspace_memory_notes` or a named store of the agent. */
export const MemoryStoreName = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,63}$/, "store names match ^[a-z][a-z0-9_]{0,63}$")
  .describe("Memory store, e.g. workspace_memory_notes");
export type MemoryStoreName = z.infer<typeof MemoryStoreName>;

/** Stores the agent reads and writes with the memory tools (the others belong to their own tools). */
export const WORKSPACE_MEMORY = "workspace_memory";
export const WORKSPACE_MEMORY_NOTES = "workspace_memory_notes";
/** Stores kept by their own tools; `memory_write` refuses them. */
export const SKILLS_STORE = "skills";
export const NOTEPAD_STORE = "notepad";
export const LEARNINGS_STORE = "learnings";
/** The entry of `workspace_memory` that `memory_promote_note` writes (openboa's MEMORY.md). */
export const SHARED_MEMORY_TARGET = "MEMORY.md";

export const MemoryTarget = z
  .string()
  .min(1)
  .max(512)
  .regex(/^[^\s/][^\n\r]*$/, "targets are one line and do not start with / or a space")
  .describe("Entry name inside the store, e.g. deploy-notes.md");

export const VersionId = z.string().min(1).max(128).describe("A version id from memory_list_versions");
const ExpectedVersionId = VersionId.nullable()
  .optional()
  .describe(
    "Write only if the entry's current version is this one (null: only if the entry does not exist yet); " +
      "a stale id fails with a conflict and writes nothing",
  );
const Limit = (max: number, fallback: number) => z.number().int().min(1).max(max).default(fallback);

export const MemoryListInput = z.object({
  store: MemoryStoreName.optional().describe("List the entries of this store; omit to list the stores"),
});
export const MemoryReadInput = z.object({
  store: MemoryStoreName.default(WORKSPACE_MEMORY_NOTES),
  target: MemoryTarget,
});
export const MemoryWriteInput = z.object({
  store: MemoryStoreName.default(WORKSPACE_MEMORY_NOTES).describe(
    "workspace_memory_notes or a named store; workspace_memory changes only through memory_promote_note",
  ),
  target: MemoryTarget,
  content: z.string(),
  mode: z.enum(["replace", "append"]).default("replace"),
  expected_version_id: ExpectedVersionId,
});
export const MemoryListVersionsInput = z.object({
  store: MemoryStoreName.default(WORKSPACE_MEMORY_NOTES),
  target: MemoryTarget,
  limit: Limit(100, 20),
});
export const MemoryReadVersionInput = z.object({ version_id: VersionId });
export const MemorySearchInput = z.object({
  query: z.string().min(1).max(1_000).describe('Web search syntax: words, "exact phrase", -excluded, or'),
  stores: z.array(MemoryStoreName).max(16).optional().describe("Only these stores (default: all memory)"),
  limit: Limit(50, 10),
});
export const MemoryPromoteNoteInput = z.object({
  note: z.string().min(1).describe("The durable note to add to the agent's shared MEMORY.md"),
  mode: z.enum(["append", "replace"]).default("append"),
  expected_version_id: ExpectedVersionId,
});
export const LearningListInput = z.object({ limit: Limit(100, 20) });

// Retrieval over memory and session history (same agent only). Hits are candidates to reread, not truth.
const SearchQuery = z
  .string()
  .min(1)
  .max(1_000)
  .describe('Web search syntax: words, "exact phrase", -excluded, or');
const SessionFilter = z.string().min(1).max(100).optional().describe("Only this session of the agent");
const IncludeCurrent = z
  .boolean()
  .default(false)
  .describe("Also search the current session (default: only the agent's other sessions)");
const LineageScope = z
  .enum(["related", "parent", "children", "siblings"])
  .optional()
  .describe("Only sessions near the current one: its parent, children, siblings, or all three (related)");
export const RetrievalSearchInput = z.object({
  query: SearchQuery,
  sources: z
    .array(z.enum(["memory", "sessions", "traces"]))
    .min(1)
    .max(3)
    .default(["memory", "sessions"])
    .describe(
      "memory: the agent's memory stores; sessions: messages and tool calls of its sessions; " +
        "traces: spans of its wakes, every word in the span's name, status or attributes (not searched unless named)",
    ),
  include_current_session: IncludeCurrent,
  lineage: LineageScope,
  limit: Limit(50, 10),
});
export const SessionSearchContextInput = z.object({
  query: SearchQuery,
  session_id: SessionFilter,
  include_current_session: IncludeCurrent,
  lineage: LineageScope,
  limit: Limit(50, 10),
});
export const SessionSearchTracesInput = z.object({
  query: z
    .string()
    .min(1)
    .max(200)
    .describe(
      "Words that must all appear in a span (name, status, attributes, exception), e.g. 'bash error'",
    ),
  session_id: SessionFilter,
  lineage: LineageScope,
  limit: Limit(50, 10),
});

const SkillName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "skill names match ^[a-z0-9][a-z0-9_-]{0,63}$")
  .describe("Skill name, e.g. release-checklist");
const SkillDescription = z.string().min(1).max(300).describe("One line: when this skill applies");
export const SkillsListInput = z.object({
  include_disabled: z.boolean().default(false),
});
export const SkillsSearchInput = z.object({
  query: z.string().min(1).max(1_000),
  limit: Limit(50, 10),
});
export const SkillNameInput = z.object({ name: SkillName });
export const CreateSkillInput = z.object({
  name: SkillName,
  description: SkillDescription,
  content: z.string().min(1).describe("The full procedure, read on demand with skills_read"),
});
export const UpdateSkillInput = z.object({
  name: SkillName,
  description: SkillDescription.optional(),
  content: z.string().min(1).optional(),
  expected_version_id: ExpectedVersionId,
});
export const DeleteSkillInput = z.object({ name: SkillName, expected_version_id: ExpectedVersionId });

export const ReadNotepadInput = z.object({});
export const WriteNotepadInput = z.object({ content: z.string(), expected_version_id: ExpectedVersionId });
// One flat object (not a union) so every provider's schema rules accept it; the service checks which
// fields the operation needs.
export const UpdateNotepadInput = z.object({
  operation: z.enum(["find_replace", "append", "prepend", "delete"]),
  find: z.string().min(1).optional().describe("Exact text to replace or delete (find_replace, delete)"),
  text: z.string().optional().describe("Replacement (find_replace) or text to add (append, prepend)"),
});

export const memoryToolInputs = {
  memory_list: MemoryListInput,
  memory_read: MemoryReadInput,
  memory_write: MemoryWriteInput,
  memory_list_versions: MemoryListVersionsInput,
  memory_read_version: MemoryReadVersionInput,
  memory_search: MemorySearchInput,
  memory_promote_note: MemoryPromoteNoteInput,
  learning_list: LearningListInput,
  retrieval_search: RetrievalSearchInput,
  session_search_context: SessionSearchContextInput,
  session_search_traces: SessionSearchTracesInput,
  skills_list: SkillsListInput,
  skills_search: SkillsSearchInput,
  skills_read: SkillNameInput,
  create_skill: CreateSkillInput,
  update_skill: UpdateSkillInput,
  delete_skill: DeleteSkillInput,
  enable_skill: SkillNameInput,
  disable_skill: SkillNameInput,
  read_notepad: ReadNotepadInput,
  write_notepad: WriteNotepadInput,
  update_notepad: UpdateNotepadInput,
} as const;

export type MemoryToolName = keyof typeof memoryToolInputs;
export const MemoryToolName = z.enum(Object.keys(memoryToolInputs) as [MemoryToolName, ...MemoryToolName[]]);
