import {
  type MemoryToolName,
  NOTEPAD_STORE,
  UpdateNotepadInput,
  WakeloopError,
  WriteNotepadInput,
} from "@wakeloop/contracts";
import { lockMemoryStore, readMemoryEntry, writeMemory } from "@wakeloop/db";
import type { z } from "zod";
import { parseInput, type ToolCall } from "./tool-call";

// The session notepad (personal-agent): one entry of the agent's `notepad` store per session, its target
// the session id, so it is versioned like memory and survives wakes and restarts.

type NotepadEdit = z.output<typeof UpdateNotepadInput>;

function applyEdit(current: string, edit: NotepadEdit): string {
  if (edit.operation === "append") return current === "" ? need(edit.text) : `${current}\n${need(edit.text)}`;
  if (edit.operation === "prepend")
    return current === "" ? need(edit.text) : `${need(edit.text)}\n${current}`;
  const find = edit.find;
  if (find === undefined) throw invalid(`${edit.operation} needs find`);
  const count = current.split(find).length - 1;
  if (count !== 1) {
    throw new WakeloopError(
      "memory_edit_no_unique_match",
      `find matches ${count} times in the notepad; it must match exactly once (read_notepad shows the text)`,
    );
  }
  return current.replace(find, () => (edit.operation === "find_replace" ? need(edit.text) : ""));
}

function need(text: string | undefined): string {
  if (text === undefined) throw invalid("this operation needs text");
  return text;
}

function invalid(message: string): WakeloopError {
  return new WakeloopError("memory_invalid_input", `invalid update_notepad input: ${message}`);
}

export async function runNotepadTool(call: ToolCall, tool: MemoryToolName): Promise<Record<string, unknown>> {
  const { db, scope, sessionId } = call;
  const write = async (content: string, expectedVersionId: string | null | undefined) => {
    const version = await writeMemory(
      db,
      scope,
      {
        store: NOTEPAD_STORE,
        target: sessionId,
        content,
        ...(expectedVersionId !== undefined && { expectedVersionId }),
        author: call.author,
      },
      call.limits,
    );
    return { version_id: version.id, size_bytes: version.size_bytes };
  };
  switch (tool) {
    case "read_notepad": {
      const entry = await readMemoryEntry(db, scope, NOTEPAD_STORE, sessionId);
      return { content: entry?.content ?? "", version_id: entry?.version_id ?? null };
    }
    case "write_notepad": {
      const input = parseInput(WriteNotepadInput, call.input, tool);
      return write(input.content, input.expected_version_id);
    }
    case "update_notepad": {
      const edit = parseInput(UpdateNotepadInput, call.input, tool);
      await lockMemoryStore(db, scope, NOTEPAD_STORE);
      const entry = await readMemoryEntry(db, scope, NOTEPAD_STORE, sessionId);
      return write(applyEdit(entry?.content ?? "", edit), entry?.version_id ?? null);
    }
    default:
      throw new WakeloopError("memory_unknown_tool", `${tool} is not a notepad tool`);
  }
}
