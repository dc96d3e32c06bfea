import { WakeloopError } from "@wakeloop/contracts";
import { isNode, type JsonNode, typesOf } from "./json-node";
import { collapseCombinators, hasCombinator } from "./merge";
import { resolveRef } from "./refs";

/**
 * Every provider wants an object schema at the top level, and OpenAI and Anthropic both refuse
 * `anyOf`/`oneOf`/`allOf` there. A top-level union of objects is merged into one object (variants
 * that are `$ref`s are resolved one step first); a top level that is not an object is refused — save
 * time validation (`schemaProblem`) keeps such tools out of the registry.
 */
export function rootObject(schema: JsonNode): JsonNode {
  const { $schema: _schema, $id: _id, $comment: _comment, ...rest } = schema;
  let root = rest;
  if (hasCombinator(root)) {
    const { $defs, definitions, ...body } = root;
    for (const key of ["anyOf", "oneOf", "allOf"]) {
      const variants = body[key];
      if (Array.isArray(variants))
        body[key] = variants.filter(isNode).map((variant) => resolveRef(variant, schema));
    }
    root = collapseCombinators(body);
    if ($defs !== undefined) root.$defs = $defs;
    if (definitions !== undefined) root.definitions = definitions;
  }
  const types = typesOf(root);
  if (types.length > 0 && !types.includes("object")) {
    throw new WakeloopError(
      "invalid_tool_schema",
      `a tool input schema must be an object, not ${types.join(" | ")}`,
    );
  }
  return { ...root, type: "object", properties: isNode(root.properties) ? root.properties : {} };
}
