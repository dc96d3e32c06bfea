import { z } from "zod";

/** What an agent writes for itself (issue #13): tools it calls, libraries they require, UI components. */
export const AgentCodeKind = z.enum(["tool", "library", "ui_component"]);
export type AgentCodeKind = z.infer<typeof AgentCodeKind>;

/**
 * An agent-defined tool is offered to the model under this prefix, so it can never take the name of
 * a built-in, custom or MCP tool (none of those contains a double underscore after `agent`).
 */
export const AGENT_TOOL_PREFIX = "agent__";
