import { stableStringify } from "../stable-json";

/** A JSON Schema node as plain JSON; the normalizers build new nodes and never mutate their input. */
export type JsonNode = Record<string, unknown>;

export function isNode(value: unknown): value is JsonNode {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Keywords whose values are data, not schemas: walkers must not descend into them. */
export const DATA_KEYWORDS = new Set(["enum", "const", "default", "examples", "example"]);

/** Keywords whose values map names to schemas: the names are data, every value is a schema. */
export const SCHEMA_MAP_KEYWORDS = new Set(["properties", "patternProperties", "dependentSchemas"]);

export function mapValues(value: unknown, map: (item: unknown) => unknown): unknown {
  if (!isNode(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, map(item)]));
}

export const PRIMITIVE_TYPES = ["string", "number", "integer", "boolean"] as const;

/**
 * The JSON types a node accepts: its `type` (string or array), else what its other keywords imply
 * (`properties` → object, `items` → array, `enum`/`const` → the values' types). Empty means "anything".
 */
export function typesOf(node: JsonNode): string[] {
  if (typeof node.type === "string") return [node.type];
  if (Array.isArray(node.type)) return node.type.filter((type): type is string => typeof type === "string");
  if (isNode(node.properties) || isNode(node.additionalProperties)) return ["object"];
  if (node.items !== undefined || Array.isArray(node.prefixItems)) return ["array"];
  const values = Array.isArray(node.enum) ? node.enum : "const" in node ? [node.const] : null;
  if (values) return [...new Set(values.map(jsonTypeOf))];
  return [];
}

function jsonTypeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

export function enumValues(node: JsonNode): unknown[] | null {
  if (Array.isArray(node.enum)) return node.enum;
  if ("const" in node) return [node.const];
  return null;
}

export function acceptsNull(node: JsonNode): boolean {
  const types = typesOf(node);
  if (types.length === 0) {
    if (Array.isArray(node.anyOf) || Array.isArray(node.oneOf)) {
      return [...((node.anyOf ?? node.oneOf) as unknown[])].some(
        (variant) => isNode(variant) && acceptsNull(variant),
      );
    }
    return true;
  }
  const values = enumValues(node);
  return types.includes("null") && (values === null || values.includes(null));
}

/** Appends a note for the model about a constraint the provider cannot express. */
export function withHint(node: JsonNode, hint: string): JsonNode {
  const description =
    typeof node.description === "string" && node.description.length > 0 ? node.description : "";
  return { ...node, description: description ? `${description} (${hint})` : `(${hint})` };
}

export function hintFor(keyword: string, value: unknown): string {
  return `${keyword}: ${JSON.stringify(value)}`;
}

/** Whether two values are equal as JSON (used to de-duplicate enum values across variants). */
export function sameJson(a: unknown, b: unknown): boolean {
  return stableStringify(a) === stableStringify(b);
}
