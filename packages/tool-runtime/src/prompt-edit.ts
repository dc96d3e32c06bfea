import type { EditSystemPromptInput } from "./builtins/self-edit";

/** The longest system prompt an agent spec holds (`AgentSpec.system`). */
export const MAX_SYSTEM_PROMPT_CHARS = 200_000;

export type PromptEditResult = { ok: true; prompt: string } | { ok: false; error: string };

/**
 * One `edit_system_prompt` operation on a prompt, with the personal-agent semantics: `replace` sets
 * the whole prompt; `find_replace` replaces the first occurrence of `find` (every one with
 * `replace_all`) and fails when there is none; `append`/`prepend` add `content` at the end/start;
 * `delete` removes the first occurrence of `content` and fails when there is none. Appended and
 * prepended text goes on its own line when the prompt does not already break there, so an added
 * observation never fuses with the last sentence. Pure: the caller stores the result.
 */
export function applyPromptEdit(prompt: string, edit: EditSystemPromptInput): PromptEditResult {
  const result = edited(prompt, edit);
  if (result.ok && result.prompt.length > MAX_SYSTEM_PROMPT_CHARS) {
    return {
      ok: false,
      error: `the edited prompt would have ${result.prompt.length} characters; the limit is ${MAX_SYSTEM_PROMPT_CHARS}`,
    };
  }
  return result;
}

function edited(prompt: string, edit: EditSystemPromptInput): PromptEditResult {
  switch (edit.operation) {
    case "replace":
      if (edit.content === undefined) return missing("replace", "content");
      return { ok: true, prompt: edit.content };
    case "append": {
      if (edit.content === undefined || edit.content === "") return missing("append", "content");
      const joint = prompt === "" || prompt.endsWith("\n") || edit.content.startsWith("\n") ? "" : "\n";
      return { ok: true, prompt: `${prompt}${joint}${edit.content}` };
    }
    case "prepend": {
      if (edit.content === undefined || edit.content === "") return missing("prepend", "content");
      const joint = prompt === "" || prompt.startsWith("\n") || edit.content.endsWith("\n") ? "" : "\n";
      return { ok: true, prompt: `${edit.content}${joint}${prompt}` };
    }
    case "find_replace": {
      if (edit.find === undefined || edit.find === "") return missing("find_replace", "find");
      if (edit.replace === undefined) return missing("find_replace", "replace");
      if (!prompt.includes(edit.find)) return notFound("find", edit.find);
      const next =
        edit.replace_all === true
          ? prompt.split(edit.find).join(edit.replace)
          : replaceFirst(prompt, edit.find, edit.replace);
      return { ok: true, prompt: next };
    }
    case "delete": {
      if (edit.content === undefined || edit.content === "") return missing("delete", "content");
      if (!prompt.includes(edit.content)) return notFound("content", edit.content);
      return { ok: true, prompt: replaceFirst(prompt, edit.content, "") };
    }
  }
}

/** Replaces the first occurrence literally (`String.replace` would expand `$&` and friends). */
function replaceFirst(text: string, find: string, replacement: string): string {
  const at = text.indexOf(find);
  return `${text.slice(0, at)}${replacement}${text.slice(at + find.length)}`;
}

function missing(operation: string, field: string): PromptEditResult {
  return { ok: false, error: `operation ${operation} needs a non-empty "${field}"` };
}

function notFound(field: string, text: string): PromptEditResult {
  const shown = text.length > 80 ? `${text.slice(0, 80)}…` : text;
  return {
    ok: false,
    error: `"${field}" text ${JSON.stringify(shown)} is not in the system prompt; read_system_prompt shows the current one`,
  };
}
