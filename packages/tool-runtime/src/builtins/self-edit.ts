import type { ToolDefinition } from "@wakeloop/contracts";
import { z } from "zod";
import { managedTool } from "./define";

// The agent's own system prompt (personal-agent "Self-Modification"), executed inline by the harness:
// an edit makes a new immutable agent version, which the editing session runs from its next wake.

export const ReadSystemPromptInput = z.object({});
export type ReadSystemPromptInput = z.infer<typeof ReadSystemPromptInput>;

export const PromptEditOperation = z.enum(["replace", "find_replace", "append", "prepend", "delete"]);
export type PromptEditOperation = z.infer<typeof PromptEditOperation>;

/**
 * Flat, as the reference defines it (one object, fields by operation), so every provider's schema
 * rules accept it; which fields an operation needs is checked by `applyPromptEdit`.
 */
export const EditSystemPromptInput = z.object({
  operation: PromptEditOperation.describe("The type of edit to perform"),
  content: z
    .string()
    .max(200_000)
    .optional()
    .describe(
      "For replace: the new full prompt. For append/prepend: the text to add. For delete: the text to remove.",
    ),
  find: z.string().max(200_000).optional().describe("For find_replace: the exact substring to find"),
  replace: z.string().max(200_000).optional().describe("For find_replace: the replacement text"),
  replace_all: z
    .boolean()
    .optional()
    .describe("For find_replace: replace all occurrences instead of just the first. Default: false."),
});
export type EditSystemPromptInput = z.infer<typeof EditSystemPromptInput>;

const common = {
  permissionPolicy: "always_allow",
  interruptBehavior: "block",
  group: "self",
  executor: "inline",
  destructive: false,
} as const;

export const selfEditTools: ToolDefinition[] = [
  managedTool({
    ...common,
    name: "read_system_prompt",
    description:
      "Read your current stored system prompt and its agent version. After an edit, your context still " +
      "holds the old prompt until the next wake: read it here before making surgical edits.",
    input: ReadSystemPromptInput,
    effects: ["read"],
    idempotent: true,
    parallelism: { parallelSafe: true, resourceKey: "agent_prompt" },
  }),
  managedTool({
    ...common,
    name: "edit_system_prompt",
    description:
      "Edit your system prompt: replace it, find_replace a substring (first occurrence, or all with " +
      "replace_all), append, prepend, or delete a substring. Each edit makes a new agent version that " +
      "this session uses from its next wake; the owner can diff and roll back versions.",
    input: EditSystemPromptInput,
    effects: ["state"],
    // A repeated edit would apply twice (append); a crash mid-call reports an unknown outcome instead.
    idempotent: false,
    parallelism: { parallelSafe: false, resourceKey: "agent_prompt" },
  }),
];
