import traverse from "json-schema-traverse";
import jsonpointer from "jsonpointer";
import { isNode, type JsonNode } from "./json-node";

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
 * that would expand into itself — or that is not local (another document, a URL: never fetched) or
 * points nowhere — is replaced by `cut` (callers pass a permissive schema: the tool's own validator
 * still checks the full shape).
 *
 * json-schema-traverse (Ajv's walker) knows which keywords hold schemas and which hold data (`default`,
 * `enum`, `const`, property names); each node is expanded in place on a copy before the walk descends
 * into it, and the refs expanded on the path from the root are what makes a ref recursive.
 */
export function inlineRefs(root: JsonNode, cut: JsonNode): InlinedSchema {
  const state = { recursive: false, unresolved: false };
  const schema = structuredClone(root);
  const path: string[] = ["#"];
  const expandedAt = new Map<JsonNode, number>();

  function expand(node: JsonNode): void {
    delete node.$defs;
    delete node.definitions;
    let expanded = 0;
    // A ref may point at another ref: expand until the node is a schema of its own.
    while (typeof node.$ref === "string") {
      const { $ref: ref, ...siblings } = node;
      const target = path.includes(ref) ? null : resolvePointer(root, ref);
      if (target === null) {
        if (path.includes(ref)) state.recursive = true;
        else state.unresolved = true;
      }
      for (const key of Object.keys(node)) delete node[key];
      Object.assign(node, structuredClone(target ?? cut), siblings);
      delete node.$defs;
      delete node.definitions;
      if (target === null) break;
      path.push(ref);
      expanded += 1;
    }
    if (expanded > 0) expandedAt.set(node, expanded);
  }

  function walk(node: JsonNode): void {
    traverse(node, {
      allKeys: true,
      cb: {
        pre: (visited) => {
          expand(visited);
          // The walker predates draft 2020-12's tuple keyword: its schemas are walked here.
          if (Array.isArray(visited.prefixItems)) visited.prefixItems.filter(isNode).forEach(walk);
        },
        post: (visited) => {
          path.splice(path.length - (expandedAt.get(visited) ?? 0));
          expandedAt.delete(visited);
        },
      },
    });
  }

  walk(schema);
  return { schema, ...state };
}

/** Resolves one `$ref` step against the root (no further expansion), for shallow look-ups. */
export function resolveRef(node: JsonNode, root: JsonNode): JsonNode {
  if (typeof node.$ref !== "string") return node;
  const target = resolvePointer(root, node.$ref);
  const { $ref: _ref, ...siblings } = node;
  return target ? { ...target, ...siblings } : siblings;
}

/** The node a local ref (`#` or a `#/…` JSON pointer) names; null for any other ref or a miss. */
function resolvePointer(root: JsonNode, ref: string): JsonNode | null {
  if (ref !== "#" && !ref.startsWith("#/")) return null;
  try {
    const target: unknown = jsonpointer.get(root, decodeURIComponent(ref.slice(1)));
    return isNode(target) ? target : null;
  } catch {
    // A malformed pointer or escape (`~2`, a bad %-escape) points nowhere.
    return null;
  }
}
