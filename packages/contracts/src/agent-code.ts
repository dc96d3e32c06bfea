import { z } from "zod";
import { JsonSchemaObject } from "./tools";

/** What an agent writes for itself (issue #13): tools it calls, libraries they require, UI components. */
export const AgentCodeKind = z.enum(["tool", "library", "ui_component"]);
export type AgentCodeKind = z.infer<typeof AgentCodeKind>;

/**
 * An agent-defined tool is offered to the model under this prefix, so it can never take the name of
 * a built-in, custom or MCP tool (none of those contains a double underscore after `agent`).
 */
export const AGENT_TOOL_PREFIX = "agent__";

/** A stored UI component as a client loads it to render a `component` block (`GET /v1/agents/{id}/ui_components/{name}`). */
export const UiComponent = z.object({
  name: z.string(),
  description: z.string(),
  /** React/JSX source with an `export default` component; the client compiles and renders it. */
  code: z.string(),
  props_schema: JsonSchemaObject.nullable(),
  version: z.number().int().min(1),
});
export type UiComponent = z.infer<typeof UiComponent>;

export const GetUiComponentQuery = z.object({ version: z.coerce.number().int().positive().optional() });
