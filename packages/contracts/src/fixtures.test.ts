import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { WakeJob } from "./bus";
import { StreamDelta } from "./deltas";
import { apiJsonSchema, apiSchemas } from "./json-schema";
import { MemoryContextResponse } from "./memory";

// Read-only fixtures of every wire format: today's code must keep reading what was valid before.
const schemas: Record<string, z.ZodType> = { ...apiSchemas, WakeJob, MemoryContextResponse, StreamDelta };
const dir = join(import.meta.dirname, "..", "fixtures");

function load(kind: "valid" | "invalid") {
  return readdirSync(join(dir, kind)).map((file) => {
    const { schema, value } = JSON.parse(readFileSync(join(dir, kind, file), "utf8")) as {
      schema: string;
      value: unknown;
    };
    const zodSchema = schemas[schema];
    if (!zodSchema) throw new Error(`${file}: unknown schema ${schema}`);
    return { file, zodSchema, value };
  });
}

describe("wire-format fixtures", () => {
  it.each(load("valid"))("$file parses", ({ zodSchema, value }) => {
    const result = zodSchema.safeParse(value);
    expect(result.error?.issues ?? []).toEqual([]);
  });

  it.each(load("invalid"))("$file is rejected with issues", ({ zodSchema, value }) => {
    const result = zodSchema.safeParse(value);
    expect(result.success).toBe(false);
    expect(result.error?.issues.length).toBeGreaterThan(0);
  });
});

describe("JSON Schema export", () => {
  it.each(Object.keys(apiSchemas) as Array<keyof typeof apiSchemas>)("exports %s", (name) => {
    const schema = apiJsonSchema(name);
    expect(schema.$schema).toContain("json-schema.org");
  });

  it("describes request bodies as a client sends them (defaults optional)", () => {
    const schema = apiJsonSchema("CreateAgentRequest") as { required?: string[] };
    expect(schema.required).toEqual(["name", "model"]);
  });
});
