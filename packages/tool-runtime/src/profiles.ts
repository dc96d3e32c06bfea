import type { ToolProfile } from "@wakeloop/contracts";

/**
 * Groups every deployment knows, whether or not a tool of the group is registered yet, so a policy may
 * name `group:web` before the web tools ship. `custom` holds the agent's client-executed tools, `mcp`
 * the tools of its MCP servers and `agent_tools` the tools the agent wrote itself (create_tool).
 */
export const STANDARD_GROUPS = [
  "agent_tools",
  "automation",
  "browser",
  "custom",
  "database",
  "evaluator",
  "fs",
  "libraries",
  "llm",
  "mcp",
  "memory",
  "messaging",
  "outcomes",
  "permissions",
  "resources",
  "runtime",
  "self",
  "sessions",
  "state",
  "tools",
  "ui_components",
  "web",
] as const;

/**
 * Tool profiles (openclaw §5), as selector lists over managed tools:
 * - `minimal`: only the permission views — the model can see why it cannot act, and nothing else.
 * - `coding`: files, shell and processes, the agent's versioned substrate (resources), sub-sessions,
 *   memory, agent state, ask_user, permission views, outcomes and their evaluator.
 * - `messaging`: talking to the user and to other sessions, plus the permission views.
 * - `full`: every managed tool.
 * Profiles filter managed tools only: custom and MCP tools were configured on purpose by the agent, so
 * they pass the profile steps (allow and deny lists still apply to them).
 */
export const TOOL_PROFILES: Readonly<Record<ToolProfile, readonly string[]>> = {
  minimal: ["group:permissions"],
  coding: [
    "group:fs",
    "group:runtime",
    "group:resources",
    "group:sessions",
    "group:memory",
    "group:state",
    "group:messaging",
    "group:permissions",
    "group:outcomes",
    "group:evaluator",
    "group:tools",
    "group:libraries",
  ],
  messaging: ["group:messaging", "group:ui_components", "group:sessions", "group:permissions"],
  full: ["*"],
};
