import type { Budget, TokenUsage } from "@wakeloop/contracts";

/** The platform's sub-session limits (service configuration, shared by the harness and the gateway). */
export interface SubSessionLimits {
  /** Sessions this deep may not spawn (a root session is depth 0). */
  maxDepth: number;
  /** Sub-sessions one session may spawn in its life. */
  maxChildren: number;
}

/** Where a session stands against the limits: its depth and how many sub-sessions it spawned. */
export interface SpawnPlace {
  depth: number;
  childCount: number;
}

/** The limit a spawn would break, with the rule `/tools` names for it; null when spawning is allowed. */
export function spawnRefusal(
  place: SpawnPlace,
  limits: SubSessionLimits,
): { rule: string; reason: string } | null {
  if (place.depth >= limits.maxDepth) {
    return {
      rule: `sub_session.max_depth:${limits.maxDepth}`,
      reason: `session depth ${place.depth} is at the maximum ${limits.maxDepth}; tools that spawn sessions are removed`,
    };
  }
  if (place.childCount >= limits.maxChildren) {
    return {
      rule: `sub_session.max_children:${limits.maxChildren}`,
      reason: `the session has spawned ${place.childCount} sub-sessions, the maximum ${limits.maxChildren}; tools that spawn sessions are removed`,
    };
  }
  return null;
}

export type CarvedBudget = { ok: true; budget: Budget } | { ok: false; message: string };

/**
 * A child's token budget, carved from its parent's: never more than the parent has left (its budget
 * less its own usage and what it already gave sub-sessions, `delegated_tokens`), so a tool call cannot
 * hand out tokens its session does not have. The carved budget is then held back from the parent until
 * the child finishes and its spending is charged instead (the reducer folds both). Without `requested`
 * (the tool's `token_limit`) a limited parent gives half of what it has left, so it keeps room to wait
 * for the child and use its result; `requested` and the child agent's own limit (`agentLimit`) can only
 * lower the budget. Null means no limit at all (an unlimited parent, and no other limit).
 */
export function carveChildBudget(input: {
  parent: { budget: Budget; usage: TokenUsage; delegated_tokens: number };
  requested?: number | undefined;
  agentLimit: number | null;
}): CarvedBudget {
  const { parent, requested } = input;
  const max = parent.budget.max_total_tokens;
  const spent = parent.usage.input_tokens + parent.usage.output_tokens + parent.delegated_tokens;
  const left = max === null ? null : max - spent;
  if (left !== null && left <= 1) {
    return { ok: false, message: "this session has no tokens left to give a sub-session" };
  }
  if (requested !== undefined && left !== null && requested > left) {
    return {
      ok: false,
      message: `token_limit ${requested} is more than this session has left (${left}); ask for at most ${left}`,
    };
  }
  const share = left === null ? null : (requested ?? Math.floor(left / 2));
  const limits = [requested, share, input.agentLimit].filter((limit) => typeof limit === "number");
  return { ok: true, budget: { max_total_tokens: limits.length === 0 ? null : Math.min(...limits) } };
}
