import { type AgentCodeKind, WakeloopError } from "@wakeloop/contracts";
import {
  type AgentCodeContent,
  type AgentCodeItem,
  createAgentCode,
  type Database,
  deleteAgentCode,
  listAgentCode,
  readAgentCode,
  setAgentToolEnabled,
  updateAgentCode,
} from "@wakeloop/db";
import {
  AGENT_CODE_GROUPS,
  AGENT_CODE_LIMITS,
  agentCodeNameProblem,
  CreateLibraryInput,
  CreateToolInput,
  CreateUiComponentInput,
  checkAgentCode,
  ListToolsInput,
  NameInput,
  reservedToolNameProblem,
  UpdateLibraryInput,
  UpdateToolInput,
  UpdateUiComponentInput,
} from "@wakeloop/tool-runtime";
import type { Kysely } from "kysely";
import { z } from "zod";
import { errorOutcome, jsonOutcome, type ToolOutcome } from "./tool-outcome";

/** Refusals the model can act on (another name, delete one first): error results, nothing stored. */
const CORRECTABLE = new Set(["agent_code_exists", "agent_code_limit"]);

/** A save the model must fix: an error result, nothing stored. */
class Refused extends Error {}

/**
 * The tool, library and UI component management tools (issue #13), in the step's commit: a save is
 * checked whole (name, size, schema, code that parses) before anything is written.
 */
export async function runAgentCodeTool(
  db: Kysely<Database>,
  scope: AgentCodeScope,
  call: AgentCodeCall,
): Promise<ToolOutcome | null> {
  const kind = AGENT_CODE_GROUPS.get(call.tool.group);
  if (kind === undefined) return null;
  try {
    return await run(db, scope, call, kind);
  } catch (error) {
    if (error instanceof Refused) return errorOutcome(`${call.tool.name}: ${error.message}`);
    if (error instanceof z.ZodError) return errorOutcome(`${call.tool.name}: ${z.prettifyError(error)}`);
    if (error instanceof WakeloopError && CORRECTABLE.has(error.code)) return errorOutcome(error.message);
    throw error;
  }
}

/** The calling session's agent; the session is recorded as the author of each saved version. */
export interface AgentCodeScope {
  tenantId: string;
  agentId: string;
  sessionId: string;
}

export interface AgentCodeCall {
  id: string;
  tool: { name: string; group: string };
  input: Record<string, unknown>;
}

async function run(
  db: Kysely<Database>,
  scope: AgentCodeScope,
  call: AgentCodeCall,
  kind: AgentCodeKind,
): Promise<ToolOutcome> {
  const author = { sessionId: scope.sessionId, toolCallId: call.id };
  const { input } = call;
  switch (call.tool.name) {
    case "create_tool":
    case "create_library":
    case "create_ui_component": {
      const draft = createDraft(kind, input);
      // Only new tools: one stored before the prefix was reserved can still be updated or deleted.
      const reserved = kind === "tool" ? reservedToolNameProblem(draft.name) : null;
      if (reserved !== null) throw new Refused(reserved);
      const content = checked(kind, draft.name, draft.content);
      return jsonOutcome(
        await createAgentCode(db, scope, kind, draft.name, content, author, {
          maxItems: AGENT_CODE_LIMITS.itemsPerKind,
        }),
      );
    }
    case "update_tool":
    case "update_library":
    case "update_ui_component": {
      const { name, patch } = updateDraft(kind, input);
      const saved = await updateAgentCode(
        db,
        scope,
        kind,
        name,
        (current) => checked(kind, name, { ...contentOf(current), ...patch }),
        author,
      );
      return saved === null ? errorOutcome(missing(kind, name)) : jsonOutcome(saved);
    }
    case "delete_tool":
    case "delete_library":
    case "delete_ui_component": {
      const { name } = NameInput.parse(input);
      return jsonOutcome({ deleted: await deleteAgentCode(db, scope, kind, name) });
    }
    case "enable_tool":
    case "disable_tool": {
      const { name } = NameInput.parse(input);
      const result = await setAgentToolEnabled(db, scope, name, call.tool.name === "enable_tool");
      return result === null ? errorOutcome(missing(kind, name)) : jsonOutcome(result);
    }
    case "list_tools": {
      const { include_disabled } = ListToolsInput.parse(input);
      const tools = await listAgentCode(db, scope, "tool", { includeDisabled: include_disabled });
      return jsonOutcome({
        tools: tools.map(({ name, description, enabled, version }) => ({
          name,
          description,
          enabled,
          version,
        })),
      });
    }
    case "list_libraries":
    case "list_ui_components": {
      const items = await listAgentCode(db, scope, kind, { includeDisabled: true });
      const key = kind === "library" ? "libraries" : "components";
      return jsonOutcome({
        [key]: items.map(({ name, description, version }) => ({ name, description, version })),
      });
    }
    case "read_tool":
    case "read_library":
    case "read_ui_component": {
      const { name } = NameInput.parse(input);
      const item = await readAgentCode(db, scope, kind, name);
      return item === null ? errorOutcome(missing(kind, name)) : jsonOutcome(shown(item));
    }
    default:
      return errorOutcome(`tool ${call.tool.name} has no implementation`);
  }
}

function createDraft(
  kind: AgentCodeKind,
  input: unknown,
): { name: string; content: Omit<AgentCodeContent, "requires"> } {
  switch (kind) {
    case "tool": {
      const { name, description, parameter_schema, code } = CreateToolInput.parse(input);
      return { name, content: { description, code, schema: parameter_schema } };
    }
    case "library": {
      const { name, description, code } = CreateLibraryInput.parse(input);
      return { name, content: { description, code, schema: null } };
    }
    case "ui_component": {
      const { name, description, code, props_schema } = CreateUiComponentInput.parse(input);
      return { name, content: { description, code, schema: props_schema ?? null } };
    }
  }
}

function updateDraft(
  kind: AgentCodeKind,
  input: unknown,
): { name: string; patch: Partial<Omit<AgentCodeContent, "requires">> } {
  switch (kind) {
    case "tool": {
      const { name, description, parameter_schema, code } = UpdateToolInput.parse(input);
      return { name, patch: defined({ description, code, schema: parameter_schema }) };
    }
    case "library": {
      const { name, description, code } = UpdateLibraryInput.parse(input);
      return { name, patch: defined({ description, code }) };
    }
    case "ui_component": {
      const { name, description, code, props_schema } = UpdateUiComponentInput.parse(input);
      return { name, patch: defined({ description, code, schema: props_schema }) };
    }
  }
}

/** The fields a partial update gave; an absent one keeps the current value. */
function defined<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** The whole save checked as stored, with the libraries its code requires. */
function checked(
  kind: AgentCodeKind,
  name: string,
  content: Omit<AgentCodeContent, "requires">,
): AgentCodeContent {
  const nameProblem = agentCodeNameProblem(name);
  if (nameProblem !== null) throw new Refused(nameProblem);
  const check = checkAgentCode({ kind, ...content });
  if (!check.ok) throw new Refused(check.message);
  return { ...content, requires: check.requires };
}

function contentOf(item: AgentCodeItem): Omit<AgentCodeContent, "requires"> {
  return { description: item.description, code: item.code, schema: item.schema };
}

/** What read_tool, read_library and read_ui_component return, with the reference's field names. */
function shown(item: AgentCodeItem): Record<string, unknown> {
  const { name, description, code, version } = item;
  switch (item.kind) {
    case "tool":
      return { name, description, parameter_schema: item.schema, code, enabled: item.enabled, version };
    case "library":
      return { name, description, code, version };
    case "ui_component":
      return { name, description, code, props_schema: item.schema, version };
  }
}

function missing(kind: AgentCodeKind, name: string): string {
  const list = kind === "tool" ? "list_tools" : kind === "library" ? "list_libraries" : "list_ui_components";
  return `no ${kind === "ui_component" ? "UI component" : kind} named "${name}"; ${list} shows what exists`;
}
