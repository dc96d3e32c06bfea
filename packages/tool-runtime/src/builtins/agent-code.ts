import { type AgentCodeKind, JsonSchemaObject, type ToolDefinition } from "@wakeloop/contracts";
import { z } from "zod";
import { type ManagedToolSpec, managedTool } from "./define";

// The personal-agent reference's Tool Management, Libraries and UI Components tools: CRUD over the
// agent's own code, executed inline in the step's commit (a refused save stores nothing). Saving code
// that runs in the sandbox asks first (the approver sees the code in the call's input); removing,
// toggling and reading never run anything. Components run in the person's client, so none of their
// tools asks. Each family is its own group (`group:tools`, `group:libraries`, `group:ui_components`).

const Name = z.string().min(1).max(100).describe("The snake_case name");

const ToolName = Name.describe("Name of the agent-defined tool (without the agent__ prefix)");
const Code = z.string().max(100_000);
const Description = z.string().max(10_000);

export const CreateToolInput = z.object({
  name: ToolName.describe("Unique snake_case tool name; it is offered as agent__<name> from the next wake"),
  description: Description.describe("What the tool does, shown to the model in the tool list"),
  parameter_schema: JsonSchemaObject.describe('JSON Schema of the tool\'s arguments ("type": "object")'),
  code: Code.describe(
    "JavaScript run with node in the session's sandbox as the body of an async function: `args` holds the validated arguments; `return` a JSON value (or call `resolve(value)`). require('<library>') loads your libraries; console output is returned as logs.",
  ),
});
export type CreateToolInput = z.infer<typeof CreateToolInput>;

export const UpdateToolInput = z.object({
  name: ToolName,
  description: Description.optional(),
  parameter_schema: JsonSchemaObject.optional(),
  code: Code.optional(),
});
export type UpdateToolInput = z.infer<typeof UpdateToolInput>;

export const ToolNameInput = z.object({ name: ToolName });
export type ToolNameInput = z.infer<typeof ToolNameInput>;

export const ListToolsInput = z.object({
  include_disabled: z
    .boolean()
    .default(false)
    .describe("Include disabled tools in the list. Default: false."),
});

export const CreateLibraryInput = z.object({
  name: Name.describe("Unique library name (snake_case); tools load it with require('<name>')"),
  description: Description.describe("What this library provides"),
  code: Code.describe(
    "CommonJS module code: export with `exports.foo = ...` or `module.exports = ...`; may require() other libraries.",
  ),
});
export type CreateLibraryInput = z.infer<typeof CreateLibraryInput>;

export const UpdateLibraryInput = z.object({
  name: Name.describe("Name of the library to update"),
  description: Description.optional(),
  code: Code.optional(),
});
export type UpdateLibraryInput = z.infer<typeof UpdateLibraryInput>;

export const NameInput = z.object({ name: Name });
export type NameInput = z.infer<typeof NameInput>;

export const ListInput = z.object({});

export const CreateUiComponentInput = z.object({
  name: Name.describe("Unique component name (snake_case); render blocks name it in a component block"),
  description: Description.describe("What this component does"),
  code: Code.describe(
    "React/JSX component code; must `export default` the component. The client injects React, hooks and UI primitives and renders it with the block's props.",
  ),
  props_schema: JsonSchemaObject.optional().describe("Optional JSON Schema describing the expected props"),
});
export type CreateUiComponentInput = z.infer<typeof CreateUiComponentInput>;

export const UpdateUiComponentInput = z.object({
  name: Name,
  description: Description.optional(),
  code: Code.optional(),
  props_schema: JsonSchemaObject.optional(),
});
export type UpdateUiComponentInput = z.infer<typeof UpdateUiComponentInput>;

type Family = "tools" | "libraries" | "ui_components";

const base = {
  destructive: false,
  interruptBehavior: "block",
  executor: "inline",
} as const satisfies Partial<ManagedToolSpec>;

function write(
  group: Family,
  spec: Pick<ManagedToolSpec, "name" | "description" | "input" | "permissionPolicy" | "idempotent"> &
    Partial<Pick<ManagedToolSpec, "destructive">>,
): ToolDefinition {
  return managedTool({
    ...base,
    ...spec,
    group,
    effects: ["state"],
    parallelism: { parallelSafe: false, resourceKey: `agent_code:${group}` },
  });
}

function read(group: Family, spec: Pick<ManagedToolSpec, "name" | "description" | "input">): ToolDefinition {
  return managedTool({
    ...base,
    ...spec,
    group,
    permissionPolicy: "always_allow",
    effects: ["read"],
    idempotent: true,
    parallelism: { parallelSafe: true, resourceKey: `agent_code:${group}` },
  });
}

export const agentCodeTools: ToolDefinition[] = [
  write("tools", {
    name: "create_tool",
    description:
      "Create a tool of your own: JavaScript run in this session's sandbox with node. It is offered as agent__<name> from your next wake on (not in this one). Returns { name, version: 1 }.",
    input: CreateToolInput,
    permissionPolicy: "always_ask",
    idempotent: false,
  }),
  write("tools", {
    name: "update_tool",
    description:
      "Change a tool of yours; only the fields given change, and the result is a new version. Returns { name, version }.",
    input: UpdateToolInput,
    permissionPolicy: "always_ask",
    idempotent: false,
  }),
  write("tools", {
    name: "delete_tool",
    description: "Delete a tool of yours (its versions stay as history). Returns { deleted }.",
    input: ToolNameInput,
    permissionPolicy: "always_allow",
    destructive: true,
    idempotent: true,
  }),
  write("tools", {
    name: "enable_tool",
    description: "Offer a disabled tool of yours again, from your next wake on. Returns { name, enabled }.",
    input: ToolNameInput,
    permissionPolicy: "always_allow",
    idempotent: true,
  }),
  write("tools", {
    name: "disable_tool",
    description:
      "Stop offering a tool of yours without deleting it, from your next wake on. Returns { name, enabled }.",
    input: ToolNameInput,
    permissionPolicy: "always_allow",
    idempotent: true,
  }),
  read("tools", {
    name: "list_tools",
    description: "List the tools you defined: { tools: [{ name, description, enabled, version }] }.",
    input: ListToolsInput,
  }),
  read("tools", {
    name: "read_tool",
    description:
      "Read one tool you defined: { name, description, parameter_schema, code, enabled, version }.",
    input: ToolNameInput,
  }),
  write("libraries", {
    name: "create_library",
    description:
      "Create a shared CommonJS module that your tools load with require('<name>'). Returns { name, version: 1 }.",
    input: CreateLibraryInput,
    permissionPolicy: "always_ask",
    idempotent: false,
  }),
  write("libraries", {
    name: "update_library",
    description:
      "Change a library's code or description (a new version; every tool requiring it runs the new code). Returns { name, version }.",
    input: UpdateLibraryInput,
    permissionPolicy: "always_ask",
    idempotent: false,
  }),
  write("libraries", {
    name: "delete_library",
    description: "Delete a library (tools requiring it then fail to load it). Returns { deleted }.",
    input: NameInput,
    permissionPolicy: "always_allow",
    destructive: true,
    idempotent: true,
  }),
  read("libraries", {
    name: "list_libraries",
    description: "List your libraries: { libraries: [{ name, description, version }] }.",
    input: ListInput,
  }),
  read("libraries", {
    name: "read_library",
    description: "Read one library's full code: { name, description, code, version }.",
    input: NameInput,
  }),
  write("ui_components", {
    name: "create_ui_component",
    description:
      'Store a React component the client can render: render_blocks and render_and_wait show it with a { "type": "component", "component": "<name>", "props": {...} } block. Returns { name, version: 1 }.',
    input: CreateUiComponentInput,
    permissionPolicy: "always_allow",
    idempotent: false,
  }),
  write("ui_components", {
    name: "update_ui_component",
    description:
      "Change a stored component; only the fields given change, and the result is a new version. Returns { name, version }.",
    input: UpdateUiComponentInput,
    permissionPolicy: "always_allow",
    idempotent: false,
  }),
  write("ui_components", {
    name: "delete_ui_component",
    description: "Delete a stored component (its versions stay as history). Returns { deleted }.",
    input: NameInput,
    permissionPolicy: "always_allow",
    destructive: true,
    idempotent: true,
  }),
  read("ui_components", {
    name: "list_ui_components",
    description: "List your stored components: { components: [{ name, description, version }] }.",
    input: ListInput,
  }),
  read("ui_components", {
    name: "read_ui_component",
    description: "Read one stored component: { name, description, code, props_schema, version }.",
    input: NameInput,
  }),
];

/** The kind of code each management group manages. */
export const AGENT_CODE_GROUPS: ReadonlyMap<string, AgentCodeKind> = new Map<string, AgentCodeKind>([
  ["tools", "tool"],
  ["libraries", "library"],
  ["ui_components", "ui_component"],
]);
