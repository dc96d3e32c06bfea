import { DATA_KEYWORDS, isNode, type JsonNode, mapValues, SCHEMA_MAP_KEYWORDS } from "./json-node";

export interface InlinedSchema {
  schema: JsonNode;
  /** A `$ref` pointed back into itself; that spot was replaced by `cut`. */
  recursive: boolean;
  /** A `$ref` could not be resolved (external or missing); that spot was replaced by `cut`. */
  unresolved: boolean;
}

/**
 * Replaces every local `$ref` (`#`, `#/$defs/x`, `#/definitions/x`, any JSON pointer) by the schema it
 * points to, merged with the `$ref`'s sibling keywords, and drops `$defs`/`definitions`. A reference
 * that would expand into itself — or that cannot be resolved — is replaced by `cut` (callers pass a
 * permissive schema: the tool's own validator still checks the full shape).
 */
export function inlineRefs(root: JsonNode, cut: JsonNode): InlinedSchema {
  const state = { recursive: false, unresolved: false };

  function visit(value: unknown, stack: readonly string[]): unknown {
    if (Array.isArray(value)) return value.map((item) => visit(item, stack));
    if (!isNode(value)) return value;
    if (typeof value.$ref === "string") {
      const ref = value.$ref;
      const { $ref: _ref, ...siblings } = value;
      if (stack.includes(ref)) {
        state.recursive = true;
        return { ...cut, ...visitNode(siblings, stack) };
      }
      const target = resolvePointer(root, ref);
      if (!target) {
        state.unresolved = true;
        return { ...cut, ...visitNode(siblings, stack) };
      }
      return { ...(visit(target, [...stack, ref]) as JsonNode), ...visitNode(siblings, stack) };
    }
    return visitNode(value, stack);
  }

  function visitNode(node: JsonNode, stack: readonly string[]): JsonNode {
    const out: JsonNode = {};
    for (const [key, item] of Object.entries(node)) {
      if (key === "$defs" || key === "definitions") continue;
      out[key] = DATA_KEYWORDS.has(key)
        ? item
        : SCHEMA_MAP_KEYWORDS.has(key)
          ? mapValues(item, (schema) => visit(schema, stack))
          : visit(item, stack);
    }
    return out;
  }

  const schema = visit(root, ["#"]) as JsonNode;
  return { schema, ...state };
}

/** Resolves one `$ref` step against the root (no further expansion), for shallow look-ups. */
export function resolveRef(node: JsonNode, root: JsonNode): JsonNode {
  if (typeof node.$ref !== "string") return node;
  const target = resolvePointer(root, node.$ref);
  const { $ref: _ref, ...siblings } = node;
  return target ? { ...target, ...siblings } : siblings;
}

function resolvePointer(root: JsonNode, ref: string): JsonNode | null {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return null;
  let current: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const segment = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    if (!isNode(current) && !Array.isArray(current)) return null;
    current = (current as Record<string, unknown>)[segment];
  }
  return isNode(current) ? current : null;
}
