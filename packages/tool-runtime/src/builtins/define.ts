import type { ToolDefinition } from "@wakeloop/contracts";
import { z } from "zod";

export type ManagedToolSpec = Omit<
  ToolDefinition,
  "inputSchema" | "ownership" | "ownerOnly" | "availability" | "readOnly"
> & {
  /** Authored in zod; the model sees its JSON Schema (input side, so defaulted fields are optional). */
  input: z.ZodType;
  availability?: ToolDefinition["availability"];
  ownerOnly?: boolean;
};

/** A runtime-owned tool definition; `readOnly` follows from the effects so the two never disagree. */
export function managedTool(spec: ManagedToolSpec): ToolDefinition {
  const { input, availability, ownerOnly, ...rest } = spec;
  return {
    ...rest,
    inputSchema: z.toJSONSchema(input, { io: "input" }) as Record<string, unknown>,
    ownership: "managed",
    readOnly: !spec.effects.some((effect) => effect === "write" || effect === "state"),
    availability: availability ?? [],
    ownerOnly: ownerOnly ?? false,
  };
}

/** The shape of a read-only view executed in the worker: always allowed, repeatable, parallel-safe. */
export const READ_ONLY_INLINE = {
  permissionPolicy: "always_allow",
  effects: ["read"],
  destructive: false,
  idempotent: true,
  interruptBehavior: "cancel",
  parallelism: { parallelSafe: true },
  executor: "inline",
} as const satisfies Omit<ManagedToolSpec, "name" | "description" | "input" | "group">;
