import { EvaluatedPermission, ToolExecutor, ToolOwnership, WakeloopError } from "@wakeloop/contracts";
import { z } from "zod";
import { type EffectiveTool, type EffectiveToolSet, toolsByName } from "./effective-tool-set";
import { checkInput } from "./input-validation";
import { keysConflict, resolveResourceKey } from "./resource-key";

/** One tool call as the model produced it, in the model's order. */
export interface ModelToolCall {
  id: string;
  name: string;
  input: unknown;
}

export const RejectionCode = z.enum([
  "unknown_tool",
  "unavailable_tool",
  "invalid_input",
  "duplicate_call_id",
]);
export type RejectionCode = z.infer<typeof RejectionCode>;

const common = { id: z.string(), name: z.string(), index: z.number().int().nonnegative() };

/** A call that runs: in `group`, after every earlier group finished. */
export const RunCall = z.object({
  ...common,
  status: z.literal("run"),
  group: z.number().int().nonnegative(),
  resourceKey: z.string().nullable(),
  evaluatedPermission: EvaluatedPermission.exclude(["deny"]),
  executor: ToolExecutor,
  ownership: ToolOwnership,
});
export type RunCall = z.infer<typeof RunCall>;

/** A call that never runs: its planned result is an `is_error` tool result with `error.message`. */
export const RejectedCall = z.object({
  ...common,
  status: z.literal("rejected"),
  evaluatedPermission: z.literal("deny"),
  error: z.object({ code: RejectionCode, message: z.string() }),
});
export type RejectedCall = z.infer<typeof RejectedCall>;

export const PlannedCall = z.discriminatedUnion("status", [RunCall, RejectedCall]);
export type PlannedCall = z.infer<typeof PlannedCall>;

/**
 * The stored plan of one batch (read back through this schema). `calls` is in the model's order;
 * `groups` run one after another, the calls inside a group side by side.
 */
export const BatchPlan = z.object({
  version: z.literal(1),
  calls: z.array(PlannedCall),
  groups: z.array(z.array(z.string())),
});
export type BatchPlan = z.infer<typeof BatchPlan>;

/**
 * Plans a batch (DESIGN §5). Unknown, unavailable and invalid calls are rejected with a planned error
 * result and the wake goes on. The valid calls are cut into groups in the model's order:
 * - a call that is not parallel-safe is a group of its own, and later calls wait for it (it may change
 *   what they read);
 * - a parallel-safe call joins the open group unless its resource key conflicts with a key already in
 *   it, in which case it starts the next group — so conflicting calls run serially in the model's order.
 * Concatenating the groups therefore gives the valid calls in the model's order. The plan depends only
 * on the calls and the effective set, never on the order of `effective.tools`.
 */
export function planBatch(calls: readonly ModelToolCall[], effective: EffectiveToolSet): BatchPlan {
  const tools = toolsByName(effective);
  const seenIds = new Set<string>();
  const planned: PlannedCall[] = [];
  const groups: string[][] = [];
  let open: { ids: string[]; keys: string[] } | null = null;

  calls.forEach((call, index) => {
    const rejection = reject(call, tools, effective, seenIds);
    seenIds.add(call.id);
    if (rejection) {
      planned.push({
        id: call.id,
        name: call.name,
        index,
        status: "rejected",
        evaluatedPermission: "deny",
        error: rejection,
      });
      return;
    }
    const tool = tools.get(call.name) as EffectiveTool;
    const resourceKey = resolveResourceKey(tool, call.input as Record<string, unknown>);
    const joinsOpen =
      open !== null &&
      tool.parallelism.parallelSafe &&
      (resourceKey === null || !open.keys.some((key) => keysConflict(key, resourceKey)));
    if (!joinsOpen || open === null) {
      open = { ids: [], keys: [] };
      groups.push(open.ids);
    }
    open.ids.push(call.id);
    if (resourceKey !== null) open.keys.push(resourceKey);
    planned.push({
      id: call.id,
      name: call.name,
      index,
      status: "run",
      group: groups.length - 1,
      resourceKey,
      evaluatedPermission: tool.permissionPolicy === "always_ask" ? "ask" : "allow",
      executor: tool.executor,
      ownership: tool.ownership,
    });
    // Nothing may join a group after a call that is not parallel-safe.
    if (!tool.parallelism.parallelSafe) open = null;
  });

  return { version: 1, calls: planned, groups };
}

function reject(
  call: ModelToolCall,
  tools: ReadonlyMap<string, EffectiveTool>,
  effective: EffectiveToolSet,
  seenIds: ReadonlySet<string>,
): RejectedCall["error"] | null {
  if (seenIds.has(call.id)) {
    return {
      code: "duplicate_call_id",
      message: `call id "${call.id}" was already used in this batch; each call needs its own id`,
    };
  }
  const tool = tools.get(call.name);
  if (!tool) {
    const exclusion = effective.excluded.find((candidate) => candidate.tool === call.name);
    if (exclusion) {
      return {
        code: "unavailable_tool",
        message: `tool "${call.name}" is not available now: ${exclusion.reason}`,
      };
    }
    const available = [...tools.keys()].sort().join(", ");
    return { code: "unknown_tool", message: `unknown tool "${call.name}"; available tools: ${available}` };
  }
  const check = checkInput(tool.inputSchema, call.input);
  if (!check.ok) {
    return {
      code: "invalid_input",
      message: `invalid input for ${call.name}: ${check.message}. Fix the input and call the tool again.`,
    };
  }
  return null;
}

/**
 * Puts results (which finish in any order) back into the model's order — the order they are
 * appended in. Every result must belong to a call of the plan.
 */
export function orderResults<T>(
  plan: BatchPlan,
  results: readonly T[],
  callIdOf: (result: T) => string,
): T[] {
  const position = new Map(plan.calls.map((call) => [call.id, call.index]));
  return results
    .map((result) => {
      const index = position.get(callIdOf(result));
      if (index === undefined) {
        throw new WakeloopError(
          "unknown_tool_call",
          `result for call "${callIdOf(result)}" is not in the batch plan`,
        );
      }
      return { result, index };
    })
    .sort((a, b) => a.index - b.index)
    .map((entry) => entry.result);
}
