import type { ToolProfile } from "@wakeloop/contracts";

/**
 * Groups every deployment knows, whether or not a tool of the group is registered yet, so a policy may
 * name `group:web` before the web tools ship. `custom` holds the agent's client-executed tools and `mcp`
 * the tools of its MCP servers.
 */
export const STANDARD_GROUPS = [
  "automation",
  "custom",
  "database",
  "evaluator",
  "fs",
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
  ],
  messaging: ["group:messaging", "group:sessions", "group:permissions"],
  full: ["*"],
};
