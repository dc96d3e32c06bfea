import {
  CreateSkillInput,
  DeleteSkillInput,
  type MemoryContextResponse,
  type MemoryToolName,
  SKILLS_STORE,
  SkillNameInput,
  SkillsListInput,
  SkillsSearchInput,
  UpdateSkillInput,
  WakeloopError,
} from "@wakeloop/contracts";
import {
  type Database,
  listMemoryEntries,
  lockMemoryStore,
  type MemoryEntry,
  type MemoryScope,
  memoryContext,
  readMemoryEntry,
  writeMemory,
} from "@wakeloop/db";
import type { Kysely } from "kysely";
import { NOT_RECALLED } from "./recall";
import { rankedSearch, whyOf } from "./retrieval-tools";
import { notFound, parseInput, type ToolCall } from "./tool-call";

// Skills are entries of the agent's `skills` store: the target is the name, the content the procedure,
// the metadata its one-line description and whether it is enabled. Versioned like any memory entry.

const MAX_SKILLS_LISTED = 200;

interface SkillMeta {
  description: string;
  enabled: boolean;
}

function metaOf(entry: Pick<MemoryEntry, "metadata">): SkillMeta {
  return {
    description: String(entry.metadata.description ?? ""),
    enabled: entry.metadata.enabled !== false,
  };
}

const readNext = (name: string) => ({ tool: "skills_read", input: { name } });

/**
 * A wake's memory context, in one round trip: the skills index of the system context (names and
 * descriptions of enabled skills) and whether recall could find anything.
 */
export async function wakeContext(db: Kysely<Database>, scope: MemoryScope): Promise<MemoryContextResponse> {
  const context = await memoryContext(db, scope, {
    store: SKILLS_STORE,
    limit: MAX_SKILLS_LISTED,
    notRecalled: NOT_RECALLED,
  });
  const skills = context.entries
    .map((entry) => ({ name: entry.target, ...metaOf(entry) }))
    .filter((skill) => skill.enabled)
    .map(({ name, description }) => ({ name, description }));
  return { skills, recallable: context.recallable };
}

async function existing(call: ToolCall, name: string): Promise<MemoryEntry> {
  await lockMemoryStore(call.db, call.scope, SKILLS_STORE);
  const entry = await readMemoryEntry(call.db, call.scope, SKILLS_STORE, name);
  if (entry === null) throw notFound(`skill ${name}`, "skills_list shows the agent's skills");
  return entry;
}

async function save(
  call: ToolCall,
  name: string,
  content: string,
  meta: SkillMeta,
  expectedVersionId: string | null | undefined,
) {
  const version = await writeMemory(
    call.db,
    call.scope,
    {
      store: SKILLS_STORE,
      target: name,
      content,
      metadata: { ...meta },
      ...(expectedVersionId !== undefined && { expectedVersionId }),
      author: call.author,
    },
    call.limits,
  );
  return { name, version_id: version.id, content_hash: version.content_hash, ...meta };
}

export async function runSkillTool(call: ToolCall, tool: MemoryToolName): Promise<Record<string, unknown>> {
  const { db, scope } = call;
  switch (tool) {
    case "skills_list": {
      const { include_disabled } = parseInput(SkillsListInput, call.input, tool);
      const entries = await listMemoryEntries(db, scope, SKILLS_STORE, { limit: MAX_SKILLS_LISTED });
      return {
        skills: entries
          .map((entry) => ({
            name: entry.target,
            ...metaOf(entry),
            version_id: entry.version_id,
            preview: entry.content.slice(0, 160),
            next_step: readNext(entry.target),
          }))
          .filter((skill) => include_disabled || skill.enabled),
      };
    }
    case "skills_search": {
      const { query, limit } = parseInput(SkillsSearchInput, call.input, tool);
      const { hits, ...ranking } = await rankedSearch(call, {
        query,
        limit,
        memory: { stores: [SKILLS_STORE], enabledOnly: true },
        events: null,
        spans: null,
      });
      return {
        query,
        ...ranking,
        skills: hits.flatMap((hit) =>
          hit.found.source === "memory"
            ? [
                {
                  name: hit.found.row.target,
                  description: String(hit.found.row.metadata.description ?? ""),
                  snippet: hit.found.row.snippet,
                  why: whyOf(hit),
                  next_step: readNext(hit.found.row.target),
                },
              ]
            : [],
        ),
      };
    }
    case "skills_read": {
      const { name } = parseInput(SkillNameInput, call.input, tool);
      const entry = await readMemoryEntry(db, scope, SKILLS_STORE, name);
      if (entry === null) throw notFound(`skill ${name}`, "skills_list shows the agent's skills");
      return { name, ...metaOf(entry), content: entry.content, version_id: entry.version_id };
    }
    case "create_skill": {
      const input = parseInput(CreateSkillInput, call.input, tool);
      try {
        return await save(
          call,
          input.name,
          input.content,
          { description: input.description, enabled: true },
          null,
        );
      } catch (error) {
        if (error instanceof WakeloopError && error.code === "memory_version_conflict") {
          throw new WakeloopError(
            "memory_skill_exists",
            `skill ${input.name} exists; change it with update_skill`,
            {
              details: error.details,
            },
          );
        }
        throw error;
      }
    }
    case "update_skill": {
      const input = parseInput(UpdateSkillInput, call.input, tool);
      if (input.description === undefined && input.content === undefined) {
        throw new WakeloopError("memory_invalid_input", "update_skill needs a new description or content");
      }
      const entry = await existing(call, input.name);
      const meta = {
        ...metaOf(entry),
        ...(input.description !== undefined && { description: input.description }),
      };
      return save(call, input.name, input.content ?? entry.content, meta, input.expected_version_id);
    }
    case "delete_skill": {
      const input = parseInput(DeleteSkillInput, call.input, tool);
      const entry = await existing(call, input.name);
      const version = await writeMemory(
        db,
        scope,
        {
          store: SKILLS_STORE,
          target: input.name,
          content: "",
          metadata: entry.metadata,
          delete: true,
          ...(input.expected_version_id !== undefined && { expectedVersionId: input.expected_version_id }),
          author: call.author,
        },
        call.limits,
      );
      return { name: input.name, deleted: true, version_id: version.id };
    }
    case "enable_skill":
    case "disable_skill": {
      const { name } = parseInput(SkillNameInput, call.input, tool);
      const entry = await existing(call, name);
      const meta = metaOf(entry);
      const enabled = tool === "enable_skill";
      if (meta.enabled === enabled) return { name, ...meta, changed: false, version_id: entry.version_id };
      return {
        ...(await save(call, name, entry.content, { ...meta, enabled }, entry.version_id)),
        changed: true,
      };
    }
    default:
      throw new WakeloopError("memory_unknown_tool", `${tool} is not a skill tool`);
  }
}
