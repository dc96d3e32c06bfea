import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
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

  it("expands a recursive $defs entry once and cuts it where it refers to itself, at any depth", () => {
    const tree = {
      type: "object",
      properties: { root: { $ref: "#/$defs/Node" } },
      $defs: {
        Node: {
          type: "object",
          properties: {
            label: { type: "string" },
            children: { type: "array", items: { $ref: "#/$defs/Node" } },
            parent: { $ref: "#/$defs/Link" },
          },
        },
        Link: { description: "a link", $ref: "#/$defs/Node" },
      },
    };
    const result = inlineRefs(tree, { description: "cut" });
    expect(result.recursive).toBe(true);
    expect(result.unresolved).toBe(false);
    expect(result.schema).toEqual({
      type: "object",
      properties: {
        root: {
          type: "object",
          properties: {
            label: { type: "string" },
            children: { type: "array", items: { description: "cut" } },
            parent: { description: "a link" },
          },
        },
      },
    });
    expect(JSON.stringify(result.schema)).not.toMatch(/\$ref|\$defs/);
    // The input is left as it was.
    expect(tree.$defs.Link).toEqual({ description: "a link", $ref: "#/$defs/Node" });
  });

  it("refuses remote and external refs without fetching them", async () => {
    let requests = 0;
    const server = createServer((_request, response) => {
      requests += 1;
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ type: "string" }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/schema.json`;
      const result = inlineRefs(
        {
          type: "object",
          properties: {
            remote: { $ref: url, description: "remote" },
            pointer: { $ref: `${url}#/$defs/X` },
            file: { $ref: "file:///etc/passwd" },
            relative: { $ref: "other.json#/x" },
            missing: { $ref: "#/$defs/Nope" },
            malformed: { $ref: "#/%E0%A4%A" },
          },
        },
        { type: "string" },
      );
      expect(result.unresolved).toBe(true);
      expect(result.recursive).toBe(false);
      expect(result.schema.properties).toEqual({
        remote: { type: "string", description: "remote" },
        pointer: { type: "string" },
        file: { type: "string" },
        relative: { type: "string" },
        missing: { type: "string" },
        malformed: { type: "string" },
      });
      // Whatever a fetch would take, none was started.
      await new Promise((resolve) => setImmediate(resolve));
      expect(requests).toBe(0);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("inlines refs in tuples (items arrays and prefixItems) and combinators", () => {
    const schema = {
      type: "object",
      $defs: { S: { type: "string" }, N: { type: "number" } },
      properties: {
        pair: { type: "array", prefixItems: [{ $ref: "#/$defs/S" }, { $ref: "#/$defs/N" }] },
        old: { type: "array", items: [{ $ref: "#/$defs/N" }] },
        either: { anyOf: [{ $ref: "#/$defs/S" }, { allOf: [{ $ref: "#/$defs/N" }] }] },
      },
    };
    expect(inlineRefs(schema, {})).toEqual({
      schema: {
        type: "object",
        properties: {
          pair: { type: "array", prefixItems: [{ type: "string" }, { type: "number" }] },
          old: { type: "array", items: [{ type: "number" }] },
          either: { anyOf: [{ type: "string" }, { allOf: [{ type: "number" }] }] },
        },
      },
      recursive: false,
      unresolved: false,
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
