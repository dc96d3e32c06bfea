import type { ToolDefinition } from "@wakeloop/contracts";
import { z } from "zod";
import { managedTool, READ_ONLY_INLINE } from "./define";

export const VaultListInput = z.object({});

/**
 * openboa's `vault_list`: the names of the tenant's vault secrets and which of the session's MCP
 * servers use each, never a value (values are write-only through the API and reach only the MCP
 * connection that needs them).
 */
export const vaultTools: ToolDefinition[] = [
  managedTool({
    ...READ_ONLY_INLINE,
    group: "mcp",
    name: "vault_list",
    description:
      "List the names of the credentials in this tenant's vault and which of this session's MCP servers " +
      "use each (values are never shown), with the servers' reachability when their tools were last listed.",
    input: VaultListInput,
  }),
];
