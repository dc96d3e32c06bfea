import type { ToolDefinition } from "@wakeloop/contracts";
import { z } from "zod";
import { managedTool } from "./define";

export const AskUserInput = z.object({
  question: z.string().min(1).max(4_000).describe("The question, as the user will read it"),
  options: z
    .array(z.string().min(1).max(500))
    .min(2)
    .max(20)
    .optional()
    .describe("Choices to offer; the user may still answer in free text"),
});
export type AskUserInput = z.infer<typeof AskUserInput>;

/**
 * Pauses the session: the harness emits the call as `agent.custom_tool_use`, the session goes idle with
 * `requires_action`, and the user's `user.custom_tool_result` is the tool result.
 */
export const askUserTool: ToolDefinition = managedTool({
  name: "ask_user",
  description:
    "Ask the user a question and wait for the answer. Use it when you cannot proceed without a decision " +
    "or a fact only the user has; the session pauses until they reply.",
  input: AskUserInput,
  permissionPolicy: "always_allow",
  effects: ["ask"],
  destructive: false,
  idempotent: true,
  interruptBehavior: "cancel",
  group: "messaging",
  parallelism: { parallelSafe: true },
  pauses: "ask_user",
  executor: "client",
});
