import type { ToolDefinition } from "@wakeloop/contracts";
import { z } from "zod";
import { managedTool, READ_ONLY_INLINE } from "./define";

export const PermissionsDescribeInput = z.object({});
export type PermissionsDescribeInput = z.infer<typeof PermissionsDescribeInput>;

export const PermissionsCheckInput = z.object({
  tool_name: z.string().min(1).max(64).describe("The tool to check, e.g. shell_run"),
});
export type PermissionsCheckInput = z.infer<typeof PermissionsCheckInput>;

const common = { ...READ_ONLY_INLINE, group: "permissions" } as const;

/** Read-only views of the session's permission posture (see permission-tools.ts for what they return). */
export const permissionTools: ToolDefinition[] = [
  managedTool({
    ...common,
    name: "permissions_describe",
    description:
      "Describe this session's permissions: confirmations waiting for the user, tools that always ask " +
      "before running, and tools that are unavailable with the reason.",
    input: PermissionsDescribeInput,
  }),
  managedTool({
    ...common,
    name: "permissions_check",
    description:
      "Check one tool before calling it: whether it is available, whether it will wait for the user's " +
      "confirmation, and why.",
    input: PermissionsCheckInput,
  }),
];
