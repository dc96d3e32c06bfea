import {
  RenderAndWaitInput,
  RenderBlocksInput,
  SendMessageInput,
  type ToolDefinition,
} from "@wakeloop/contracts";
import { z } from "zod";
import { inlineComponentProblem } from "../agent-code";
import { type ManagedToolSpec, managedTool } from "./define";

// The personal-agent reference's UI Rendering tools. send_message and render_blocks append an event a
// client renders (`agent.ui_message`, `agent.ui_blocks`) in the step's commit; render_and_wait is
// fulfilled by the client like ask_user: its call is the `agent.custom_tool_use` the client renders, and
// the client's `user.custom_tool_result` is the tool result.

const SHOWN = {
  permissionPolicy: "always_allow",
  effects: ["write"],
  destructive: false,
  interruptBehavior: "block",
  group: "messaging",
  // Shown in the model's order: two messages of one turn must not swap.
  parallelism: { parallelSafe: false, resourceKey: "ui" },
  executor: "inline",
} as const satisfies Omit<ManagedToolSpec, "name" | "description" | "input" | "idempotent">;

export const uiTools: ToolDefinition[] = [
  managedTool({
    ...SHOWN,
    name: "send_message",
    description:
      "Send the user a chat message (markdown) without ending your turn, e.g. a progress update mid-task.",
    input: SendMessageInput,
    idempotent: false,
  }),
  managedTool({
    ...SHOWN,
    name: "render_blocks",
    description:
      "Show the user structured blocks (markdown, table, chart, form, code, image, alert, json, or a " +
      'component you stored: { "type": "component", "component": "<name>", "props": {...} }) without ' +
      "waiting. To wait for the user's answer to a form, use render_and_wait.",
    input: RenderBlocksInput,
    idempotent: false,
  }),
  managedTool({
    name: "render_and_wait",
    description:
      "Show the user a React component (a stored one by name, or inline JSX code) with props, or blocks " +
      "(e.g. a form), and wait for them to act; the session pauses until they answer, and their answer " +
      '(what the component passes to callTool(action, payload), a form\'s {action: "submit", data: {...}}) is the result.',
    input: RenderAndWaitInput,
    permissionPolicy: "always_allow",
    effects: ["ask"],
    destructive: false,
    idempotent: true,
    interruptBehavior: "cancel",
    group: "messaging",
    parallelism: { parallelSafe: true },
    pauses: "client_result",
    executor: "client",
  }),
];

/**
 * What the JSON Schema of a client-fulfilled UI call cannot say (exactly one of component, code and
 * blocks; the blocks' total size; inline code that parses), checked when the call is planned: nothing in
 * the worker parses render_and_wait's input before the client sees it.
 */
export function clientUiCallProblem(name: string, input: unknown): string | null {
  if (name !== "render_and_wait") return null;
  const parsed = RenderAndWaitInput.safeParse(input);
  if (!parsed.success) return `render_and_wait: ${z.prettifyError(parsed.error)}`;
  const problem = parsed.data.code === undefined ? null : inlineComponentProblem(parsed.data.code);
  return problem === null ? null : `render_and_wait: ${problem}`;
}
