import {
  DATA_KEYWORDS,
  hintFor,
  isNode,
  type JsonNode,
  mapValues,
  SCHEMA_MAP_KEYWORDS,
  typesOf,
  withHint,
} from "./json-node";
import { addNull, collapseCombinators } from "./merge";
import { inlineRefs } from "./refs";
import { rootObject } from "./root-object";

/**
 * OpenAI function parameters. Strict mode (structured outputs) accepts a subset of JSON Schema, and in
 * exchange the arguments always match it:
 * - every object has `additionalProperties: false` and lists every property in `required`; a property
 *   that was optional becomes nullable instead (`type: [T, "null"]`, `null` added to its enum) — see
 *   `dropStrictNulls` for turning those nulls back into absent fields;
 * - `anyOf` is supported (not at the top level), `oneOf` is read as `anyOf`, `allOf` is merged,
 *   `const` becomes a one-value `enum`, `$ref`s are inlined;
 * - supported constraints are kept (`pattern`, listed `format`s, number bounds, `minItems`/`maxItems`);
 *   others (`minLength`, `default`, …) are dropped and written into the description for the model;
 * - at most 5000 properties, 10 levels of nesting and 1000 enum values in all.
 * A schema that cannot meet these rules — free-form maps (`additionalProperties` schemas,
 * `patternProperties`), "any value" nodes, tuples, several non-null types, recursion — is sent
 * non-strict instead: the same schema with an object top level and `items` on every array.
 */
export interface OpenAiSchema {
  schema: JsonNode;
  strict: boolean;
}

const STRICT_FORMATS = new Set([
  "date-time",
  "time",
  "date",
  "duration",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "uuid",
]);
const HINTED = ["default", "minLength", "maxLength", "uniqueItems", "minProperties", "maxProperties"];
const LIMITS = { properties: 5_000, depth: 10, enumValues: 1_000 };

export function toOpenAiSchema(schema: JsonNode): OpenAiSchema {
  const inlined = inlineRefs(schema, {});
  const root = rootObject(inlined.schema);
  if (!inlined.recursive && !inlined.unresolved) {
    const strict = strictSchema(root);
    if (strict) return { schema: strict, strict: true };
  }
  return { schema: looseNode(root), strict: false };
}

function strictSchema(root: JsonNode): JsonNode | null {
  const totals = { properties: 0, enumValues: 0 };

  function visit(input: JsonNode, depth: number): JsonNode | null {
    if (depth > LIMITS.depth) return null;
    let node = Array.isArray(input.allOf) ? collapseCombinators(input) : input;
    if (Array.isArray(node.oneOf)) {
      const { oneOf, ...rest } = node;
      node = { ...rest, anyOf: oneOf };
    }
    if (Array.isArray(node.anyOf)) {
      const { anyOf, description, title, ...constraints } = node;
      // A union that also constrains (`{type, properties, anyOf}`) is an intersection: merge it.
      if (Object.keys(constraints).length > 0) return visit(collapseCombinators(node), depth);
      const variants = anyOf.filter(isNode).map((variant) => visit(variant, depth + 1));
      if (variants.some((variant) => variant === null)) return null;
      return withDescription({ anyOf: variants }, description ?? title);
    }
    if ("const" in node) {
      const { const: value, ...rest } = node;
      node = { ...rest, enum: [value] };
    }
    const types = typesOf(node);
    const nonNull = types.filter((type) => type !== "null");
    const type = nonNull[0];
    if (type === undefined || nonNull.length > 1) return null;
    // Null is accepted only if both the type and the enum (when there is one) accept it.
    const values = Array.isArray(node.enum) ? node.enum : null;
    const nullable = types.includes("null") && (values === null || values.includes(null));
    let out: JsonNode = withDescription(
      { type: nullable ? [type, "null"] : type },
      node.description ?? node.title,
    );
    if (values) {
      totals.enumValues += values.length;
      if (totals.enumValues > LIMITS.enumValues) return null;
      out.enum = nullable ? values : values.filter((value) => value !== null);
    }
    for (const keyword of HINTED) if (keyword in node) out = withHint(out, hintFor(keyword, node[keyword]));
    switch (type) {
      case "string":
        if (typeof node.pattern === "string") out.pattern = node.pattern;
        if (typeof node.format === "string") {
          if (STRICT_FORMATS.has(node.format)) out.format = node.format;
          else out = withHint(out, hintFor("format", node.format));
        }
        return out;
      case "number":
      case "integer":
        for (const keyword of ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"]) {
          if (typeof node[keyword] === "number") out[keyword] = node[keyword];
        }
        return out;
      case "array": {
        if (!isNode(node.items) || Array.isArray(node.prefixItems)) return null;
        const items = visit(node.items, depth + 1);
        if (!items) return null;
        out.items = items;
        for (const keyword of ["minItems", "maxItems"])
          if (typeof node[keyword] === "number") out[keyword] = node[keyword];
        return out;
      }
      case "object": {
        if (
          (node.additionalProperties !== undefined && node.additionalProperties !== false) ||
          node.patternProperties
        ) {
          return null;
        }
        const properties = isNode(node.properties) ? node.properties : {};
        const required = new Set(Array.isArray(node.required) ? node.required : []);
        const strictProperties: JsonNode = {};
        for (const [name, schema] of Object.entries(properties)) {
          totals.properties += 1;
          if (totals.properties > LIMITS.properties || !isNode(schema)) return null;
          const visited = visit(schema, depth + 1);
          if (!visited) return null;
          strictProperties[name] = required.has(name) ? visited : addNull(visited);
        }
        return {
          ...out,
          properties: strictProperties,
          required: Object.keys(strictProperties),
          additionalProperties: false,
        };
      }
      case "boolean":
      case "null":
        return out;
      default:
        return null;
    }
  }

  return visit(root, 1);
}

/** Non-strict: keep the schema, but OpenAI still refuses arrays without `items`. */
function looseNode(node: JsonNode): JsonNode {
  const out: JsonNode = {};
  for (const [key, value] of Object.entries(node)) {
    if (DATA_KEYWORDS.has(key)) out[key] = value;
    else if (SCHEMA_MAP_KEYWORDS.has(key))
      out[key] = mapValues(value, (item) => (isNode(item) ? looseNode(item) : item));
    else if (Array.isArray(value)) out[key] = value.map((item) => (isNode(item) ? looseNode(item) : item));
    else out[key] = isNode(value) ? looseNode(value) : value;
  }
  if (typesOf(out).includes("array") && out.items === undefined && out.prefixItems === undefined)
    out.items = {};
  return out;
}

function withDescription(node: JsonNode, description: unknown): JsonNode {
  return typeof description === "string" && description.length > 0 ? { ...node, description } : node;
}
