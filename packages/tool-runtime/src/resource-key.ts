import type { ToolDefinition } from "@wakeloop/contracts";

/**
 * Resource keys name what a call touches, as `:`-separated scopes (`fs`, `fs:src/a.ts`, `shell:main`).
 * Two keys conflict when they are equal or one is a scope of the other (`fs` covers `fs:src/a.ts`), so
 * a whole-tree `apply_patch` (key `fs`) never overlaps a `write` to one file.
 */
export function keysConflict(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}:`) || b.startsWith(`${a}:`);
}

/**
 * Fills `{field}` placeholders from the call's input, falling back to the field's JSON Schema default
 * (`shell:{shell_id}` → `shell:main`). A placeholder that resolves to nothing widens the key to the
 * scope before it (`fs:{path}` → `fs`): when we cannot tell what a call touches, it conflicts with
 * everything in that scope (with no scope before it, the bare template is the key, shared by every such
 * call). Paths are compared as written; `a.txt` and `./a.txt` are distinct keys.
 */
export function resolveResourceKey(tool: ToolDefinition, input: Record<string, unknown>): string | null {
  const template = tool.parallelism.resourceKey;
  if (template === undefined) return null;
  let resolved = "";
  for (const part of template.split(/(\{[A-Za-z0-9_]+\})/)) {
    const field = /^\{([A-Za-z0-9_]+)\}$/.exec(part)?.[1];
    if (field === undefined) {
      resolved += part;
      continue;
    }
    const value = fieldValue(tool, input, field);
    if (value === null) return resolved.replace(/:+$/, "") || template;
    resolved += value;
  }
  return resolved;
}

function fieldValue(tool: ToolDefinition, input: Record<string, unknown>, field: string): string | null {
  const given = Object.hasOwn(input, field) ? input[field] : undefined;
  const value = given ?? schemaDefault(tool, field);
  if (value === undefined || value === null) return null;
  return typeof value === "string" ? value : JSON.stringify(value);
}

function schemaDefault(tool: ToolDefinition, field: string): unknown {
  const properties = tool.inputSchema.properties;
  if (properties === null || typeof properties !== "object") return undefined;
  const property = (properties as Record<string, unknown>)[field];
  if (property === null || typeof property !== "object") return undefined;
  return (property as Record<string, unknown>).default;
}
