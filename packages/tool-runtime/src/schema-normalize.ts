import type { JsonSchemaObject, ModelProvider, ToolDefinition } from "@wakeloop/contracts";
import { toGeminiSchema } from "./schema/gemini";
import { toOpenAiSchema } from "./schema/openai";
import { rootObject } from "./schema/root-object";

export { dropStrictNulls } from "./schema/strict-arguments";

/**
 * One tool input schema in the dialect of a provider. Every schema goes through here — managed,
 * custom, MCP, agent-defined — so a schema a provider rejects never reaches it. Normalization only
 * reshapes or relaxes (the model may be offered a wider schema); arguments are always validated against
 * the tool's original schema.
 * - anthropic: JSON Schema as is, object at the top level (top-level unions merged).
 * - openai: strict-mode schema when possible (`strict: true`), else the schema non-strict (schema/openai.ts).
 * - gemini: the OpenAPI subset of schema/gemini.ts.
 */
export interface NormalizedSchema {
  schema: JsonSchemaObject;
  /** Send with OpenAI `strict: true` (always false for the other providers). */
  strict: boolean;
}

export function normalizeToolSchema(schema: JsonSchemaObject, provider: ModelProvider): NormalizedSchema {
  switch (provider) {
    case "anthropic":
      return { schema: rootObject(schema), strict: false };
    case "openai":
      return toOpenAiSchema(schema);
    case "gemini":
      return { schema: toGeminiSchema(schema), strict: false };
  }
}

/** What a model adapter sends for one tool. */
export interface ProviderTool {
  name: string;
  description: string;
  inputSchema: JsonSchemaObject;
  strict: boolean;
}

export function providerTools(tools: readonly ToolDefinition[], provider: ModelProvider): ProviderTool[] {
  return tools.map((tool) => {
    const normalized = normalizeToolSchema(tool.inputSchema, provider);
    return {
      name: tool.name,
      description: tool.description,
      inputSchema: normalized.schema,
      strict: normalized.strict,
    };
  });
}
