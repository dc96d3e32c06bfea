import { JsonSchemaObject, type ToolDefinition } from "@wakeloop/contracts";
import { z } from "zod";
import { managedTool } from "./define";

// The personal-agent reference's Database and LLM Generation tools. Both run in the worker but not in
// the step's commit: agent SQL commits on its own connection (the agent's role), and llm_generate calls
// a model provider, so neither can be undone with the step and neither is re-run after a crash.

export const DbSqlInput = z.object({
  sql: z.string().min(1).max(100_000).describe("One SQL statement against the agent's own database"),
  params: z
    .array(z.unknown())
    .max(1_000)
    .default([])
    .describe("Positional bind parameters for ? placeholders, in order"),
});
export type DbSqlInput = z.infer<typeof DbSqlInput>;

export const DbSchemaInput = z.object({});

export const Intelligence = z.enum(["low", "medium", "high"]);
export type Intelligence = z.infer<typeof Intelligence>;

export const LlmGenerateInput = z.object({
  prompt: z.string().min(1).max(200_000).describe("The prompt to send to the model"),
  system: z.string().max(50_000).optional().describe("Optional system prompt for the call"),
  intelligence: Intelligence.default("low").describe(
    "Model capability level: 'low' is cheap and fast (classification, extraction), 'medium' the workhorse, 'high' the most capable. Default low.",
  ),
  schema: JsonSchemaObject.optional().describe(
    "JSON Schema for a structured answer: the result then has `parsed`, the answer as JSON matching it",
  ),
  max_tokens: z.number().int().min(1).max(32_000).default(4_096).describe("Max output tokens. Default 4096."),
});
export type LlmGenerateInput = z.infer<typeof LlmGenerateInput>;

export const dataTools: ToolDefinition[] = [
  managedTool({
    name: "db_sql",
    description:
      "Run one SQL statement (Postgres dialect) against the agent's own database, shared by all its sessions. SELECT/WITH/VALUES return { columns, rows, row_count, truncated } (at most 1000 rows); other statements return { command, changes }, or rows with RETURNING. Use ? placeholders with params. Each call is its own transaction; 5 s statement timeout; the database has a size quota.",
    input: DbSqlInput,
    permissionPolicy: "always_allow",
    effects: ["read", "state"],
    destructive: true,
    idempotent: false,
    interruptBehavior: "block",
    group: "database",
    parallelism: { parallelSafe: false, resourceKey: "agent_sql" },
    executor: "inline",
  }),
  managedTool({
    name: "db_schema",
    description:
      "List the tables of the agent's own database with their columns (name, type, notnull, pk) and row counts.",
    input: DbSchemaInput,
    permissionPolicy: "always_allow",
    effects: ["read"],
    destructive: false,
    idempotent: true,
    interruptBehavior: "cancel",
    group: "database",
    parallelism: { parallelSafe: true, resourceKey: "agent_sql" },
    executor: "inline",
  }),
  managedTool({
    name: "llm_generate",
    description:
      "One model call without tools or history, for classification, extraction, summarization or translation. Returns { text, parsed (with schema), model, usage }; its tokens count against this session's budget. Use intelligence to pick a cheaper or stronger model (default low).",
    input: LlmGenerateInput,
    permissionPolicy: "always_allow",
    effects: ["network"],
    destructive: false,
    idempotent: false,
    interruptBehavior: "cancel",
    group: "llm",
    parallelism: { parallelSafe: true },
    executor: "inline",
  }),
];
