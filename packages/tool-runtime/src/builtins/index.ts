import type { ToolDefinition } from "@wakeloop/contracts";
import { agentCodeTools } from "./agent-code";
import { askUserTool } from "./ask-user";
import { dataTools } from "./data";
import { memoryTools } from "./memory";
import { navigationTools } from "./navigation";
import { outcomeTools } from "./outcomes";
import { permissionTools } from "./permissions";
import { resourceTools } from "./resources";
import { sandboxTools } from "./sandbox";
import { selfEditTools } from "./self-edit";
import { stateTools } from "./state";
import { subSessionTools } from "./sub-sessions";
import { timeTools } from "./time";
import { toolSearchTool } from "./tool-search";
import { uiTools } from "./ui";
import { vaultTools } from "./vault";
import { webTools } from "./web";

/**
 * Every runtime-owned tool, preloaded in code: a new session needs no registry set-up events, and a
 * registry is always the same function of the agent spec.
 */
export const managedTools: readonly ToolDefinition[] = [
  ...stateTools,
  askUserTool,
  ...uiTools,
  ...permissionTools,
  ...sandboxTools,
  ...resourceTools,
  ...timeTools,
  ...memoryTools,
  ...selfEditTools,
  ...navigationTools,
  ...webTools,
  ...dataTools,
  ...subSessionTools,
  ...outcomeTools,
  ...agentCodeTools,
  ...vaultTools,
  toolSearchTool,
];
