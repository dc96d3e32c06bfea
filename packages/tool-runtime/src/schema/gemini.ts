import { enumValues, hintFor, isNode, type JsonNode, typesOf, withHint } from "./json-node";
import { collapseCombinators, hasCombinator } from "./merge";
import { inlineRefs } from "./refs";
import { rootObject } from "./root-object";

/**
 * Gemini function declarations take a subset of OpenAPI 3.0 schemas. Conservative rules that the
 * Gemini API versions we target accept:
 * - one `type` per node: `[T, "null"]` becomes `type: T, nullable: true`; with several non-null types
 *   the first is kept and the others are named in the description;
 * - no `anyOf`/`oneOf`/`allOf`/`not`: unions are merged (see merge.ts), `not` is dropped;
 * - `const` becomes a one-value `enum`; enums are kept when every value is a string (Gemini enums are
 *   strings), otherwise they move into the description;
 * - no `$ref`/`$defs` (inlined; recursion is cut), no `$schema`, `additionalProperties`, `title`;
 * - `format` only where Gemini defines it (`date-time`/`enum` on strings, `float`/`double`,
 *   `int32`/`int64`); value constraints (`minLength`, `minimum`, `pattern`, `default`, …) move into the
 *   description;
 * - `properties: {}` is left out (Gemini wants OBJECT properties non-empty) and `required` only names
 *   properties that exist;
 * - a node that accepts any value becomes a string the model fills with the value, and an array
 *   without `items` an array of such strings.
 */
const FORMATS: Record<string, readonly string[]> = {
  string: ["date-time", "enum"],
  number: ["float", "double"],
  integer: ["int32", "int64"],
};
const HINTED = [
  "default",
  "minLength",
  "maxLength",
  "pattern",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minItems",
  "maxItems",
  "uniqueItems",
  "minProperties",
  "maxProperties",
];

export function toGeminiSchema(schema: JsonNode): JsonNode {
  const root = rootObject(inlineRefs(schema, {}).schema);
  return visit(root);
}

function visit(input: JsonNode): JsonNode {
  let node = hasCombinator(input) ? collapseCombinators(input) : input;
  if ("const" in node) {
    const { const: value, ...rest } = node;
    node = { ...rest, enum: [value] };
  }
  const types = typesOf(node);
  const nonNull = types.filter((type) => type !== "null");
  const values = enumValues(node)?.filter((value) => value !== null) ?? null;
  const nullable = types.includes("null") || enumValues(node)?.includes(null) === true;
  const description = typeof node.description === "string" ? node.description : node.title;
  let out: JsonNode = typeof description === "string" && description.length > 0 ? { description } : {};

  const type = nonNull[0];
  if (type === undefined) {
    return withHint(
      { ...out, type: "string", ...(nullable ? { nullable: true } : {}) },
      "any JSON value, written as text",
    );
  }
  out = { type, ...out };
  if (nonNull.length > 1) out = withHint(out, `also accepts: ${nonNull.slice(1).join(", ")}`);
  if (nullable) out.nullable = true;
  if (values) {
    if (values.every((value) => typeof value === "string")) out.enum = values;
    else out = withHint(out, `one of: ${values.map((value) => JSON.stringify(value)).join(", ")}`);
  }
  if (typeof node.format === "string") {
    if (FORMATS[type]?.includes(node.format)) out.format = node.format;
    else out = withHint(out, hintFor("format", node.format));
  }
  for (const keyword of HINTED) if (keyword in node) out = withHint(out, hintFor(keyword, node[keyword]));

  if (type === "object") {
    const properties = Object.entries(isNode(node.properties) ? node.properties : {}).filter(
      (entry): entry is [string, JsonNode] => isNode(entry[1]),
    );
    if (properties.length > 0) {
      out.properties = Object.fromEntries(properties.map(([name, schema]) => [name, visit(schema)]));
      const names = new Set(properties.map(([name]) => name));
      const required = (Array.isArray(node.required) ? node.required : []).filter(
        (name): name is string => typeof name === "string" && names.has(name),
      );
      if (required.length > 0) out.required = [...new Set(required)];
    }
  }
  if (type === "array") {
    const items = Array.isArray(node.prefixItems)
      ? node.prefixItems[0]
      : Array.isArray(node.items)
        ? node.items[0]
        : node.items;
    out.items = visit(isNode(items) ? items : {});
  }
  return out;
}
