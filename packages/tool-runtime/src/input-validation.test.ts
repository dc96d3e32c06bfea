import { describe, expect, it } from "vitest";
import { z } from "zod";
import { checkInput, schemaProblem } from "./input-validation";

const schema = z.toJSONSchema(
  z
    .object({ path: z.string(), mode: z.enum(["a", "b"]).optional(), n: z.number().int().optional() })
    .strict(),
  { io: "input" },
) as Record<string, unknown>;

describe("checkInput", () => {
  it("accepts valid input", () => {
    expect(checkInput(schema, { path: "a.txt", mode: "a" })).toEqual({ ok: true });
  });

  it("explains every problem with a path", () => {
    const check = checkInput(schema, { mode: "c", n: 1.5, extra: true });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.message).toContain("input must have required property 'path'");
    expect(check.message).toContain('input.mode must be equal to one of the allowed values ("a", "b")');
    expect(check.message).toContain("input.n must be integer");
    expect(check.message).toContain('must NOT have additional properties ("extra")');
  });

  it("requires a JSON object", () => {
    expect(checkInput(schema, "x")).toEqual({ ok: false, message: "the input must be a JSON object" });
    expect(checkInput(schema, [1])).toEqual({ ok: false, message: "the input must be a JSON object" });
  });

  it("reads draft-07 schemas with $schema and unknown formats", () => {
    const draft7 = {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { url: { type: "string", format: "uri-template" } },
      required: ["url"],
    };
    expect(checkInput(draft7, { url: "x" })).toEqual({ ok: true });
  });

  it("keeps schemas that share an $id apart", () => {
    const a = {
      $id: "urn:example:tool",
      type: "object",
      properties: { a: { type: "string" } },
      required: ["a"],
    };
    const b = {
      $id: "urn:example:tool",
      type: "object",
      properties: { b: { type: "number" } },
      required: ["b"],
    };
    expect(checkInput(a, { a: "x" })).toEqual({ ok: true });
    expect(checkInput(b, { b: 1 })).toEqual({ ok: true });
    expect(checkInput(b, { a: "x" }).ok).toBe(false);
  });

  it("reuses the compiled validator for an equal schema in a new object", () => {
    expect(checkInput(structuredClone(schema), { path: 1 })).toMatchObject({ ok: false });
  });
});

describe("schemaProblem", () => {
  it("accepts object schemas and rejects others", () => {
    expect(schemaProblem(schema)).toBeNull();
    expect(schemaProblem({ type: "string" })).toContain('"type": "object"');
    expect(schemaProblem({ type: "object", properties: { a: { type: "nonsense" } } })).toMatch(/type/);
  });
});
