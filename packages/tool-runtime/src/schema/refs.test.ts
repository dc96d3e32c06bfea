import { describe, expect, it } from "vitest";
import { inlineRefs, resolveRef } from "./refs";

describe("inlineRefs", () => {
  it("inlines $defs and definitions refs, keeping the $ref's siblings, and drops the definitions", () => {
    const result = inlineRefs(
      {
        type: "object",
        $defs: { Id: { type: "string", minLength: 1 } },
        definitions: { "a/b": { type: "integer" } },
        properties: { id: { $ref: "#/$defs/Id", description: "the id" }, n: { $ref: "#/definitions/a~1b" } },
      },
      {},
    );
    expect(result).toEqual({
      schema: {
        type: "object",
        properties: { id: { type: "string", minLength: 1, description: "the id" }, n: { type: "integer" } },
      },
      recursive: false,
      unresolved: false,
    });
  });

  it("cuts recursion and unresolvable refs with the given schema", () => {
    const recursive = inlineRefs(
      { type: "object", properties: { child: { $ref: "#" }, ext: { $ref: "other.json#/x" } } },
      { description: "cut" },
    );
    expect(recursive.recursive).toBe(true);
    expect(recursive.unresolved).toBe(true);
    expect(recursive.schema.properties).toEqual({
      child: { description: "cut" },
      ext: { description: "cut" },
    });
  });

  it("treats property names and data keywords as data", () => {
    const schema = {
      type: "object",
      properties: { default: { $ref: "#/$defs/S" }, enum: { type: "string" } },
      default: { $ref: "#/$defs/S" },
      $defs: { S: { type: "string" } },
    };
    expect(inlineRefs(schema, {}).schema).toEqual({
      type: "object",
      properties: { default: { type: "string" }, enum: { type: "string" } },
      default: { $ref: "#/$defs/S" },
    });
  });
});

describe("resolveRef", () => {
  it("resolves one step and leaves other nodes alone", () => {
    const root = { $defs: { A: { $ref: "#/$defs/B" }, B: { type: "string" } } };
    expect(resolveRef({ $ref: "#/$defs/A", title: "t" }, root)).toEqual({ $ref: "#/$defs/B", title: "t" });
    expect(resolveRef({ type: "integer" }, root)).toEqual({ type: "integer" });
  });
});
