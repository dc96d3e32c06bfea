import type { ToolDefinition } from "@wakeloop/contracts";
import { askUserTool } from "./ask-user";
import { permissionTools } from "./permissions";
import { sandboxTools } from "./sandbox";
import { stateTools } from "./state";

/**
 * Every runtime-owned tool, preloaded in code: a new session needs no registry set-up events, and a
 * registry is always the same function of the agent spec.
 */
export const managedTools: readonly ToolDefinition[] = [
  ...stateTools,
  askUserTool,
  ...permissionTools,
  ...sandboxTools,
];
