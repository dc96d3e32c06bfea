import type { JsonSchemaObject } from "@wakeloop/contracts";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import { stableStringify } from "./stable-json";

/**
 * Validates model-supplied tool input against the tool's JSON Schema (the original one, never a
 * provider-normalized copy: normalization may relax a schema, validation must not). Ajv is pure code;
 * compiled validators are cached by schema object and by schema text, because registries are rebuilt
 * for every wake from specs read back from the database.
 */
export type InputCheck = { ok: true } | { ok: false; message: string };

// One Ajv instance: creating one compiles the meta-schemas, which costs far more than a tool schema.
// `addUsedSchema: false` keeps schemas' `$id`s out of its registry (MCP schemas may reuse them), and
// `$schema` is dropped because draft-07 schemas from MCP servers validate the same under 2020-12 here.
const ajv = new Ajv2020({
  strict: false,
  allErrors: true,
  validateFormats: false,
  logger: false,
  addUsedSchema: false,
});
const byObject = new WeakMap<object, ValidateFunction>();
const byText = new Map<string, { validate: ValidateFunction; compiled: object }>();
const MAX_CACHED_SCHEMAS = 1_000;

/**
 * Compiles a tool input schema, or explains why it cannot be used (`null` when it compiles). Tool input
 * schemas must describe an object; other schemas (llm_generate's answers) may describe any value.
 */
export function schemaProblem(schema: JsonSchemaObject, options: { object?: boolean } = {}): string | null {
  if ((options.object ?? true) && schema.type !== "object") {
    return 'the input schema must have "type": "object" at the top level';
  }
  try {
    validatorFor(schema);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

export function checkInput(schema: JsonSchemaObject, input: unknown): InputCheck {
  if (input === null || typeof input !== "object" || Array.isArray(input)) {
    return { ok: false, message: "the input must be a JSON object" };
  }
  const validate = validatorFor(schema);
  if (validate(input)) return { ok: true };
  return { ok: false, message: describeErrors(validate.errors ?? []) };
}

/** Validates any JSON value against a schema that compiles (see schemaProblem); `name` leads each message. */
export function checkValue(schema: JsonSchemaObject, value: unknown, name: string): InputCheck {
  const validate = validatorFor(schema);
  if (validate(value)) return { ok: true };
  return { ok: false, message: describeErrors(validate.errors ?? [], name) };
}

function validatorFor(schema: JsonSchemaObject): ValidateFunction {
  const cached = byObject.get(schema);
  if (cached) return cached;
  const text = stableStringify(schema);
  const known = byText.get(text);
  if (known) {
    byObject.set(schema, known.validate);
    return known.validate;
  }
  const { $schema: _ignored, ...compiled } = schema;
  const validate = ajv.compile(compiled);
  byObject.set(schema, validate);
  // Oldest first out (Map iteration follows insertion order); Ajv forgets the evicted schema too.
  if (byText.size >= MAX_CACHED_SCHEMAS) {
    const [oldest, entry] = byText.entries().next().value as [string, { compiled: object }];
    byText.delete(oldest);
    ajv.removeSchema(entry.compiled);
  }
  byText.set(text, { validate, compiled });
  return validate;
}
function describeErrors(errors: readonly ErrorObject[], name = "input"): string {
  const lines = errors.slice(0, 10).map((error) => {
    const path = error.instancePath === "" ? name : `${name}${error.instancePath.replaceAll("/", ".")}`;
    const extra =
      error.keyword === "additionalProperties"
        ? ` ("${String(error.params.additionalProperty)}")`
        : error.keyword === "enum"
          ? ` (${(error.params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(", ")})`
          : "";
    return `${path} ${error.message ?? "is invalid"}${extra}`;
  });
  const more = errors.length > 10 ? `; and ${errors.length - 10} more` : "";
  return `${lines.join("; ")}${more}`;
}
