import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { managedTools } from "./builtins";
import { checkInput } from "./input-validation";
import { isNode, type JsonNode } from "./schema/json-node";
import { dropStrictNulls, normalizeToolSchema, providerTools } from "./schema-normalize";

// ---- what each provider is known to reject, as checkers -------------------------------------------

/** OpenAI strict mode: the documented subset, checked at every node. */
function openAiStrictProblems(schema: JsonNode, path = "$"): string[] {
  const problems: string[] = [];
  const allowed = new Set([
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "anyOf",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
  ]);
  for (const key of Object.keys(schema)) if (!allowed.has(key)) problems.push(`${path}: keyword ${key}`);
  const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];
  if (types.length === 0 && !Array.isArray(schema.anyOf)) problems.push(`${path}: no type`);
  if (types.includes("object")) {
    if (schema.additionalProperties !== false) problems.push(`${path}: additionalProperties not false`);
    const keys = Object.keys(isNode(schema.properties) ? schema.properties : {});
    if (JSON.stringify(schema.required) !== JSON.stringify(keys))
      problems.push(`${path}: required != properties`);
    for (const key of keys)
      problems.push(
        ...openAiStrictProblems((schema.properties as JsonNode)[key] as JsonNode, `${path}.${key}`),
      );
  }
  if (types.includes("array")) {
    if (!isNode(schema.items)) problems.push(`${path}: array without items`);
    else problems.push(...openAiStrictProblems(schema.items, `${path}[]`));
  }
  if (Array.isArray(schema.anyOf)) {
    for (const [i, variant] of schema.anyOf.entries()) {
      problems.push(...openAiStrictProblems(variant as JsonNode, `${path}|${i}`));
    }
  }
  if (types.includes("null") && Array.isArray(schema.enum) && !schema.enum.includes(null)) {
    problems.push(`${path}: nullable enum without null`);
  }
  return problems;
}

/** The conservative Gemini subset. */
function geminiProblems(schema: JsonNode, path = "$"): string[] {
  const problems: string[] = [];
  const allowed = new Set([
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "properties",
    "required",
    "items",
  ]);
  for (const key of Object.keys(schema)) if (!allowed.has(key)) problems.push(`${path}: keyword ${key}`);
  if (typeof schema.type !== "string" || schema.type === "null")
    problems.push(`${path}: type ${JSON.stringify(schema.type)}`);
  if (Array.isArray(schema.enum) && !schema.enum.every((v) => typeof v === "string"))
    problems.push(`${path}: non-string enum`);
  if (schema.properties !== undefined) {
    const properties = schema.properties as JsonNode;
    if (Object.keys(properties).length === 0) problems.push(`${path}: empty properties`);
    for (const [key, value] of Object.entries(properties))
      problems.push(...geminiProblems(value as JsonNode, `${path}.${key}`));
  }
  if (Array.isArray(schema.required)) {
    for (const name of schema.required)
      if (!isNode(schema.properties) || !(name in schema.properties))
        problems.push(`${path}: required ${name} undefined`);
  }
  if (schema.type === "array" && !isNode(schema.items)) problems.push(`${path}: array without items`);
  if (isNode(schema.items)) problems.push(...geminiProblems(schema.items, `${path}[]`));
  return problems;
}

function topLevelProblems(schema: JsonNode): string[] {
  const problems: string[] = [];
  if (schema.type !== "object") problems.push("top level is not an object");
  for (const key of ["anyOf", "oneOf", "allOf", "not", "enum"])
    if (key in schema) problems.push(`top-level ${key}`);
  return problems;
}

// ---- shapes seen in the wild -----------------------------------------------------------------------

const topLevelUnion: JsonNode = {
  oneOf: [
    { type: "object", properties: { action: { const: "list" } }, required: ["action"] },
    {
      type: "object",
      properties: { action: { const: "get" }, id: { type: "string", minLength: 1 } },
      required: ["action", "id"],
    },
  ],
};
const withRefs: JsonNode = {
  $schema: "http://json-schema.org/draft-07/schema#",
  type: "object",
  definitions: {
    Point: {
      type: "object",
      properties: { x: { type: "number" }, y: { type: "number" } },
      required: ["x", "y"],
    },
  },
  properties: {
    from: { $ref: "#/definitions/Point" },
    to: { $ref: "#/definitions/Point", description: "end" },
  },
  required: ["from"],
};
const recursive = z.toJSONSchema(z.object({ key: z.string(), value: z.json() }), { io: "input" }) as JsonNode;
const nullableTypes: JsonNode = {
  type: "object",
  properties: {
    name: { type: ["string", "null"] },
    mode: { anyOf: [{ type: "string", enum: ["a", "b"] }, { type: "null" }] },
    level: { enum: [1, 2, 3] },
    tags: { type: "array" },
    kind: { const: "x" },
    anything: {},
    both: {
      allOf: [
        { type: "object", properties: { a: { type: "string" } } },
        { properties: { b: { type: "integer" } }, required: ["b"] },
      ],
    },
    never: { not: { type: "string" } },
    map: { type: "object", additionalProperties: { type: "string" } },
  },
};
const tricky: Record<string, JsonNode> = { topLevelUnion, withRefs, recursive, nullableTypes };

describe("anthropic", () => {
  it("keeps the schema as is apart from a top-level union and $schema", () => {
    const grep = managedTools.find((tool) => tool.name === "grep")?.inputSchema as JsonNode;
    const { $schema: _s, ...rest } = grep;
    expect(normalizeToolSchema(grep, "anthropic")).toEqual({ schema: rest, strict: false });
    expect(normalizeToolSchema(withRefs, "anthropic").schema.definitions).toBeDefined();
  });

  it("merges a top-level oneOf into one object; the discriminator keeps its values", () => {
    const { schema } = normalizeToolSchema(topLevelUnion, "anthropic");
    expect(topLevelProblems(schema)).toEqual([]);
    expect(schema).toEqual({
      type: "object",
      properties: { action: { type: "string", enum: ["list", "get"] }, id: { type: "string", minLength: 1 } },
      required: ["action"],
    });
  });

  it("refuses a top level that is not an object", () => {
    expect(() => normalizeToolSchema({ type: "string" }, "anthropic")).toThrow(
      expect.objectContaining({ code: "invalid_tool_schema" }),
    );
  });
});

describe("openai", () => {
  it("makes zod-authored tool schemas strict: all required, optionals nullable, defaults in the description", () => {
    const grep = managedTools.find((tool) => tool.name === "grep")?.inputSchema as JsonNode;
    const { schema, strict } = normalizeToolSchema(grep, "openai");
    expect(strict).toBe(true);
    expect(openAiStrictProblems(schema)).toEqual([]);
    const properties = schema.properties as Record<string, JsonNode>;
    expect(properties.pattern).toEqual({
      type: "string",
      description: "Regular expression (ripgrep syntax) (minLength: 1) (maxLength: 1000)",
    });
    expect(properties.ignore_case).toEqual({ type: ["boolean", "null"], description: "(default: false)" });
    expect(properties.context_lines).toMatchObject({ type: ["integer", "null"], minimum: 0, maximum: 20 });
  });

  it("adds null to the enum of an optional enum property", () => {
    const glob = managedTools.find((tool) => tool.name === "glob")?.inputSchema as JsonNode;
    const { schema } = normalizeToolSchema(glob, "openai");
    expect((schema.properties as Record<string, JsonNode>).kind).toMatchObject({
      type: ["string", "null"],
      enum: ["file", "dir", "any", null],
    });
  });

  it("inlines $refs, merges a top-level union and stays strict", () => {
    const refs = normalizeToolSchema(withRefs, "openai");
    expect(refs.strict).toBe(true);
    expect(openAiStrictProblems(refs.schema)).toEqual([]);
    expect((refs.schema.properties as Record<string, JsonNode>).to).toMatchObject({
      type: ["object", "null"],
      description: "end",
    });
    const union = normalizeToolSchema(topLevelUnion, "openai");
    expect(union.strict).toBe(true);
    expect(topLevelProblems(union.schema)).toEqual([]);
  });

  it("falls back to non-strict for maps, any-values and recursion, still with an object top level", () => {
    for (const schema of [nullableTypes, recursive]) {
      const normalized = normalizeToolSchema(schema, "openai");
      expect(normalized.strict).toBe(false);
      expect(topLevelProblems(normalized.schema)).toEqual([]);
    }
    const loose = normalizeToolSchema(nullableTypes, "openai").schema;
    expect((loose.properties as Record<string, JsonNode>).tags).toEqual({ type: "array", items: {} });
    const sandboxExecute = managedTools.find((tool) => tool.name === "sandbox_execute")
      ?.inputSchema as JsonNode;
    expect(normalizeToolSchema(sandboxExecute, "openai").strict).toBe(false);
  });

  it("dropStrictNulls turns strict-mode nulls back into absent fields", () => {
    const grep = managedTools.find((tool) => tool.name === "grep")?.inputSchema as JsonNode;
    const strictArgs = {
      pattern: "TODO",
      path: null,
      glob: null,
      ignore_case: true,
      fixed_strings: null,
      context_lines: null,
      limit: null,
    };
    expect(checkInput(grep, strictArgs).ok).toBe(false);
    const restored = dropStrictNulls(grep, strictArgs);
    expect(restored).toEqual({ pattern: "TODO", ignore_case: true });
    expect(checkInput(grep, restored).ok).toBe(true);
    // A null the schema itself allows is kept, and nested objects behind $refs are visited.
    expect(dropStrictNulls(nullableTypes, { name: null, mode: null })).toEqual({ name: null, mode: null });
    expect(dropStrictNulls(withRefs, { from: { x: 1, y: 2 }, to: null })).toEqual({ from: { x: 1, y: 2 } });
  });
});

describe("gemini", () => {
  it("turns type arrays and null unions into nullable, const into enum, and merges allOf", () => {
    const { schema } = normalizeToolSchema(nullableTypes, "gemini");
    expect(geminiProblems(schema)).toEqual([]);
    const properties = schema.properties as Record<string, JsonNode>;
    expect(properties.name).toEqual({ type: "string", nullable: true });
    expect(properties.mode).toEqual({ type: "string", nullable: true, enum: ["a", "b"] });
    expect(properties.level).toEqual({ type: "integer", description: "(one of: 1, 2, 3)" });
    expect(properties.kind).toEqual({ type: "string", enum: ["x"] });
    expect(properties.anything).toEqual({ type: "string", description: "(any JSON value, written as text)" });
    expect(properties.both).toEqual({
      type: "object",
      properties: { a: { type: "string" }, b: { type: "integer" } },
      required: ["b"],
    });
    expect(properties.never).toEqual({ type: "string", description: "(any JSON value, written as text)" });
    expect(properties.map).toEqual({ type: "object" });
  });

  it("drops $schema, additionalProperties and unsupported formats, hinting constraints", () => {
    const { schema } = normalizeToolSchema(
      {
        type: "object",
        additionalProperties: false,
        properties: {
          at: { type: "string", format: "date-time" },
          url: { type: "string", format: "uri", maxLength: 9 },
        },
      },
      "gemini",
    );
    expect(schema).toEqual({
      type: "object",
      properties: {
        at: { type: "string", format: "date-time" },
        url: { type: "string", description: '(format: "uri") (maxLength: 9)' },
      },
    });
  });

  it("leaves out empty properties, including at the top level", () => {
    expect(normalizeToolSchema({ type: "object", properties: {} }, "gemini").schema).toEqual({
      type: "object",
    });
  });
});

describe("every provider, every tool", () => {
  const schemas = [...managedTools.map((tool) => tool.inputSchema as JsonNode), ...Object.values(tricky)];

  it("produces schemas each provider accepts", () => {
    for (const schema of schemas) {
      const anthropic = normalizeToolSchema(schema, "anthropic").schema;
      expect(topLevelProblems(anthropic)).toEqual([]);
      const openai = normalizeToolSchema(schema, "openai");
      expect(topLevelProblems(openai.schema)).toEqual([]);
      if (openai.strict) expect(openAiStrictProblems(openai.schema)).toEqual([]);
      const gemini = normalizeToolSchema(schema, "gemini").schema;
      expect(
        geminiProblems({
          ...gemini,
          ...(gemini.properties ? {} : { properties: { _: { type: "string" } } }),
        }),
      ).toEqual([]);
    }
  });

  it("providerTools keeps names and descriptions and reports strictness", () => {
    const tools = providerTools(managedTools, "openai");
    expect(tools.map((tool) => tool.name)).toEqual(managedTools.map((tool) => tool.name));
    expect(tools.find((tool) => tool.name === "read")?.strict).toBe(true);
  });

  it("holds for generated schemas (fast-check)", () => {
    const leaf = fc.oneof(
      fc.constantFrom<JsonNode>(
        { type: "string" },
        { type: "integer", minimum: 0 },
        { type: "boolean", default: false },
        { type: ["string", "null"] },
        { type: "null" },
        {},
        { const: "k" },
        { enum: ["a", "b", null] },
        { enum: [1, 2] },
        { type: "string", format: "uri" },
        { $ref: "#/$defs/Named" },
      ),
    );
    const { node } = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        leaf,
        fc.record({ type: fc.constant("array"), items: tie("node") }),
        fc.record({ type: fc.constant("array") }),
        fc.record({
          type: fc.constant("object"),
          properties: fc.dictionary(fc.constantFrom("a", "b", "c", "d"), tie("node"), { maxKeys: 3 }),
          required: fc.subarray(["a", "b", "x"]),
        }),
        fc.record({ anyOf: fc.array(tie("node"), { minLength: 1, maxLength: 3 }) }),
        fc.record({ oneOf: fc.array(tie("node"), { minLength: 1, maxLength: 3 }) }),
        fc.record({ allOf: fc.array(tie("node"), { minLength: 1, maxLength: 2 }) }),
      ),
    }));
    const root = fc.record({
      type: fc.constant("object"),
      properties: fc.dictionary(fc.constantFrom("p", "q", "r"), node, { maxKeys: 3 }),
      $defs: fc.constant({
        Named: { type: "object", properties: { n: { type: "string" } }, required: ["n"] },
      }),
    });
    fc.assert(
      fc.property(root, (generated) => {
        // Frozen: any mutation of the caller's schema would throw.
        const schema = deepFreeze(generated);
        const openai = normalizeToolSchema(schema, "openai");
        expect(topLevelProblems(openai.schema)).toEqual([]);
        if (openai.strict) expect(openAiStrictProblems(openai.schema)).toEqual([]);
        const gemini = normalizeToolSchema(schema, "gemini").schema;
        expect(
          geminiProblems({
            ...gemini,
            ...(gemini.properties ? {} : { properties: { _: { type: "string" } } }),
          }),
        ).toEqual([]);
        expect(topLevelProblems(normalizeToolSchema(schema, "anthropic").schema)).toEqual([]);
        // Same input, same output: normalization is a pure function.
        expect(JSON.stringify(normalizeToolSchema(schema, "openai"))).toBe(JSON.stringify(openai));
      }),
      { numRuns: 300 },
    );
  });
});

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}
