import { acceptsNull, isNode, type JsonNode } from "./json-node";
import { collapseCombinators, hasCombinator } from "./merge";
import { resolveRef } from "./refs";

/**
 * OpenAI strict mode makes every property required and sends `null` for the ones the model leaves out.
 * This turns those nulls back into absent fields — only where the original schema does not itself
 * accept null — so the arguments validate against the tool's real schema. Apply it to the arguments
 * of tools sent with `strict: true`, before planning the batch.
 */
export function dropStrictNulls(schema: JsonNode, input: unknown): unknown {
  return visit(schema, schema, input);
}

function visit(root: JsonNode, node: JsonNode, value: unknown): unknown {
  const resolved = normalize(root, node);
  if (Array.isArray(value)) {
    const items = resolved.items;
    return isNode(items) ? value.map((item) => visit(root, items, item)) : value;
  }
  if (!isNode(value) || !isNode(resolved.properties)) return value;
  const properties = resolved.properties;
  const required = Array.isArray(resolved.required) ? resolved.required : [];
  const out: JsonNode = {};
  for (const [key, item] of Object.entries(value)) {
    const property = properties[key];
    if (!isNode(property)) {
      out[key] = item;
      continue;
    }
    if (item === null && !required.includes(key) && !acceptsNull(normalize(root, property))) continue;
    out[key] = visit(root, property, item);
  }
  return out;
}

function normalize(root: JsonNode, node: JsonNode): JsonNode {
  let current = node;
  // `$ref` chains in a valid schema are finite; the bound only guards against a self-referencing one.
  for (let step = 0; step < 32 && typeof current.$ref === "string"; step++)
    current = resolveRef(current, root);
  return hasCombinator(current) ? collapseCombinators(current) : current;
}
