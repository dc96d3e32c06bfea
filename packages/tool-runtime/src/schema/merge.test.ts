import { describe, expect, it } from "vitest";
import { addNull, collapseCombinators } from "./merge";

describe("collapseCombinators", () => {
  it("merges object variants: union of properties, intersection of required, discriminators as one enum", () => {
    expect(
      collapseCombinators({
        description: "an action",
        anyOf: [
          {
            type: "object",
            properties: { kind: { const: "a" }, x: { type: "string" } },
            required: ["kind", "x"],
          },
          { type: "object", properties: { kind: { const: "b" }, y: { type: "number" } }, required: ["kind"] },
        ],
      }),
    ).toEqual({
      type: "object",
      properties: {
        kind: { type: "string", enum: ["a", "b"] },
        x: { type: "string" },
        y: { type: "number" },
      },
      required: ["kind"],
      description: "an action",
    });
  });

  it("turns null variants into a nullable type", () => {
    expect(collapseCombinators({ oneOf: [{ type: "string", enum: ["a"] }, { type: "null" }] })).toEqual({
      type: ["string", "null"],
      enum: ["a", null],
    });
  });

  it("merges integer and number variants as number, and keeps the first of unrelated variants", () => {
    expect(collapseCombinators({ anyOf: [{ type: "integer" }, { type: "number" }] })).toEqual({
      type: "number",
    });
    expect(collapseCombinators({ anyOf: [{ type: "string" }, { type: "array", items: {} }] })).toEqual({
      type: "string",
    });
  });

  it("applies a union's sibling keywords to every variant (the union is an intersection with them)", () => {
    expect(
      collapseCombinators({
        type: "object",
        properties: { a: { type: "string" }, b: { type: "string" } },
        required: ["a"],
        anyOf: [{ required: ["b"] }, { properties: { c: { type: "integer" } }, required: ["c"] }],
      }),
    ).toEqual({
      type: "object",
      properties: { a: { type: "string" }, b: { type: "string" }, c: { type: "integer" } },
      required: ["a"],
    });
  });

  it("merges allOf: properties together, required unioned", () => {
    expect(
      collapseCombinators({
        allOf: [
          { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
          { properties: { b: { type: "string" } }, required: ["b"] },
        ],
      }),
    ).toEqual({
      type: "object",
      properties: { a: { type: "string" }, b: { type: "string" } },
      required: ["a", "b"],
    });
  });
});

describe("addNull", () => {
  it("adds null to type, enum or anyOf", () => {
    expect(addNull({ type: "string" })).toEqual({ type: ["string", "null"] });
    expect(addNull({ type: "string", const: "x" })).toEqual({ type: ["string", "null"], enum: ["x", null] });
    expect(addNull({ anyOf: [{ type: "string" }] })).toEqual({
      anyOf: [{ type: "string" }, { type: "null" }],
    });
    expect(addNull({})).toEqual({});
  });
});
