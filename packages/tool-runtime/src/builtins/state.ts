import type { ToolDefinition } from "@wakeloop/contracts";
import { z } from "zod";
import { managedTool } from "./define";

// Key/value state scoped to the agent (every session of the agent sees the same keys), executed inline
// by the harness. Group "state" so policies can name them together (`group:state`).

const StateKey = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[A-Za-z0-9_.:/-]+$/, "state keys use letters, digits and _ . : / -")
  .describe("State key, e.g. plan/current or counters:runs");

export const GetStateInput = z.object({ key: StateKey });
export type GetStateInput = z.infer<typeof GetStateInput>;

export const SetStateInput = z.object({
  key: StateKey,
  value: z.unknown().describe("Any JSON value; replaces the key's current value"),
});
export type SetStateInput = z.infer<typeof SetStateInput>;

export const DeleteStateInput = z.object({ key: StateKey });
export type DeleteStateInput = z.infer<typeof DeleteStateInput>;

export const ListStateKeysInput = z.object({
  prefix: z.string().max(256).optional().describe("Only keys starting with this prefix"),
});
export type ListStateKeysInput = z.infer<typeof ListStateKeysInput>;

const common = {
  permissionPolicy: "always_allow",
  idempotent: true,
  interruptBehavior: "block",
  group: "state",
  executor: "inline",
} as const;

export const stateTools: ToolDefinition[] = [
  managedTool({
    ...common,
    name: "get_state",
    description: "Read one key of the agent's persistent state. Returns { value } with null when unset.",
    input: GetStateInput,
    effects: ["read"],
    destructive: false,
    parallelism: { parallelSafe: true, resourceKey: "state:{key}" },
  }),
  managedTool({
    ...common,
    name: "set_state",
    description:
      "Write one key of the agent's persistent state (shared by all sessions of this agent; last write wins).",
    input: SetStateInput,
    effects: ["state"],
    destructive: false,
    parallelism: { parallelSafe: false, resourceKey: "state:{key}" },
  }),
  managedTool({
    ...common,
    name: "delete_state",
    description: "Delete one key of the agent's persistent state; deleting a missing key is not an error.",
    input: DeleteStateInput,
    effects: ["state"],
    destructive: true,
    parallelism: { parallelSafe: false, resourceKey: "state:{key}" },
  }),
  managedTool({
    ...common,
    name: "list_state_keys",
    description: "List the keys of the agent's persistent state, optionally only those with a prefix.",
    input: ListStateKeysInput,
    effects: ["read"],
    destructive: false,
    // The bare "state" scope covers every "state:<key>", so a listing never overlaps a write.
    parallelism: { parallelSafe: true, resourceKey: "state" },
  }),
];
