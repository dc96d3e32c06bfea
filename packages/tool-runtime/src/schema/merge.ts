import { enumValues, isNode, type JsonNode, PRIMITIVE_TYPES, sameJson, typesOf } from "./json-node";

/**
 * Collapses `anyOf`/`oneOf`/`allOf` into one schema, for providers (and top levels) that cannot take
 * them. A union becomes the widest single schema that still guides the model well:
 * - null variants make the result nullable (`type: [T, "null"]`);
 * - object variants merge their properties; a property is required only if every variant requires it
 *   (same-named properties are merged the same way, so a discriminator's `const`s become one `enum`);
 * - variants of one primitive type merge their `enum`/`const` values;
 * - anything else keeps the first variant (lossy: the tool's validator still checks the real schema).
 * An intersection (`allOf`) merges properties and unions `required`.
 * The combinator's sibling keywords are spread into each variant first, so `{type: "object",
 * properties, anyOf: [{required: [a]}, {required: [b]}]}` merges as whole objects.
 */
export function collapseCombinators(node: JsonNode): JsonNode {
  let current = node;
  // Each pass removes one combinator keyword, so this ends after at most three passes.
  while (hasCombinator(current)) {
    if (Array.isArray(current.allOf)) {
      const { allOf, ...rest } = current;
      current = mergeIntersection([rest, ...allOf.filter(isNode)]);
      continue;
    }
    const union = Array.isArray(current.anyOf) ? "anyOf" : "oneOf";
    const { [union]: variants, ...rest } = current;
    const siblings = withoutAnnotations(rest);
    const merged = mergeUnion(
      (variants as unknown[]).filter(isNode).map((variant) => mergeIntersection([siblings, variant])),
    );
    current = { ...merged, ...annotations(rest) };
  }
  return current;
}

export function hasCombinator(node: JsonNode): boolean {
  return Array.isArray(node.allOf) || Array.isArray(node.anyOf) || Array.isArray(node.oneOf);
}

function mergeUnion(variants: readonly JsonNode[]): JsonNode {
  const flat = variants.map((variant) => (hasCombinator(variant) ? collapseCombinators(variant) : variant));
  const nullable = flat.some((variant) => typesOf(variant).includes("null"));
  const nonNull = flat.flatMap((variant) => {
    const types = typesOf(variant);
    if (types.length === 1 && types[0] === "null") return [];
    return [withoutNull(variant)];
  });
  const first = nonNull[0];
  if (!first) return { type: "null" };
  const merged = nonNull.length === 1 ? first : (mergeSameKind(nonNull) ?? first);
  return nullable ? addNull(merged) : merged;
}

function mergeIntersection(parts: readonly JsonNode[]): JsonNode {
  const result: JsonNode = {};
  const properties: JsonNode = {};
  const required: string[] = [];
  for (const part of parts.map((item) => (hasCombinator(item) ? collapseCombinators(item) : item))) {
    for (const [key, value] of Object.entries(part)) {
      if (key === "properties" && isNode(value)) {
        for (const [name, schema] of Object.entries(value)) {
          const existing = properties[name];
          properties[name] =
            isNode(existing) && isNode(schema) ? mergeIntersection([existing, schema]) : schema;
        }
      } else if (key === "required" && Array.isArray(value)) {
        for (const name of value)
          if (typeof name === "string" && !required.includes(name)) required.push(name);
      } else if (!(key in result)) {
        result[key] = value;
      }
    }
  }
  if (Object.keys(properties).length > 0) result.properties = properties;
  if (required.length > 0) result.required = required;
  return result;
}

/** Marks a schema as also accepting null, in standard JSON Schema form. */
export function addNull(node: JsonNode): JsonNode {
  const values = enumValues(node);
  const withEnum =
    values && !values.includes(null) ? { ...withoutConst(node), enum: [...values, null] } : node;
  if (typeof node.type === "string")
    return { ...withEnum, type: node.type === "null" ? "null" : [node.type, "null"] };
  if (Array.isArray(node.type))
    return node.type.includes("null") ? withEnum : { ...withEnum, type: [...node.type, "null"] };
  if (Array.isArray(node.anyOf)) {
    return node.anyOf.some((variant) => isNode(variant) && typesOf(variant).includes("null"))
      ? node
      : { ...node, anyOf: [...node.anyOf, { type: "null" }] };
  }
  const types = typesOf(node);
  return types.length === 0
    ? node
    : { ...withEnum, type: [...types.filter((type) => type !== "null"), "null"] };
}

function mergeSameKind(variants: readonly JsonNode[]): JsonNode | null {
  const kinds = variants.map((variant) => typesOf(variant));
  if (kinds.every((types) => types.length === 1 && types[0] === "object")) return mergeObjects(variants);
  const primitive = kinds.every((types) => types.length === 1)
    ? commonPrimitive(kinds.map((types) => types[0] as string))
    : null;
  if (!primitive) return null;
  const result: JsonNode = { type: primitive };
  const description = variants.find((variant) => typeof variant.description === "string")?.description;
  if (description !== undefined) result.description = description;
  const valueLists = variants.map(enumValues);
  if (valueLists.every((values) => values !== null)) {
    const merged: unknown[] = [];
    for (const value of valueLists.flat())
      if (!merged.some((seen) => sameJson(seen, value))) merged.push(value);
    result.enum = merged;
  }
  return result;
}

function mergeObjects(variants: readonly JsonNode[]): JsonNode {
  const collected = new Map<string, JsonNode[]>();
  for (const variant of variants) {
    const properties = isNode(variant.properties) ? variant.properties : {};
    for (const [name, schema] of Object.entries(properties)) {
      if (!isNode(schema)) continue;
      collected.set(name, [...(collected.get(name) ?? []), schema]);
    }
  }
  const properties: JsonNode = {};
  for (const [name, schemas] of collected) {
    properties[name] = schemas.length === 1 ? schemas[0] : mergeUnion(schemas);
  }
  const requiredLists = variants.map((variant) =>
    Array.isArray(variant.required)
      ? variant.required.filter((name): name is string => typeof name === "string")
      : [],
  );
  const required = (requiredLists[0] ?? []).filter((name) =>
    requiredLists.every((list) => list.includes(name)),
  );
  const result: JsonNode = { type: "object", properties };
  const description = variants.find((variant) => typeof variant.description === "string")?.description;
  if (description !== undefined) result.description = description;
  if (required.length > 0) result.required = required;
  return result;
}

function commonPrimitive(types: readonly string[]): string | null {
  if (types.every((type) => type === types[0]) && PRIMITIVE_TYPES.includes(types[0] as never))
    return types[0] ?? null;
  if (types.every((type) => type === "number" || type === "integer")) return "number";
  return null;
}

function withoutNull(node: JsonNode): JsonNode {
  let result = node;
  if (Array.isArray(node.type)) {
    const types = node.type.filter((type) => type !== "null");
    result = { ...result, type: types.length === 1 ? types[0] : types };
  }
  const values = enumValues(result);
  if (values?.includes(null))
    result = { ...withoutConst(result), enum: values.filter((value) => value !== null) };
  return result;
}

function withoutConst(node: JsonNode): JsonNode {
  const { const: _const, ...rest } = node;
  return rest;
}

const ANNOTATION_KEYWORDS = [
  "description",
  "title",
  "default",
  "examples",
  "deprecated",
  "readOnly",
  "writeOnly",
];

function annotations(node: JsonNode): JsonNode {
  return Object.fromEntries(Object.entries(node).filter(([key]) => ANNOTATION_KEYWORDS.includes(key)));
}

function withoutAnnotations(node: JsonNode): JsonNode {
  return Object.fromEntries(Object.entries(node).filter(([key]) => !ANNOTATION_KEYWORDS.includes(key)));
}
