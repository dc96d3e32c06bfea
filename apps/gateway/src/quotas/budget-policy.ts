import { type ApiKeyRole, type Budget, WakeloopError } from "@wakeloop/contracts";

/** The operator's token budget rules; `null` means none (unlimited default, no cap). */
export interface BudgetLimits {
  defaultTokens: number | null;
  maxTokens: number | null;
}

/** What an agent without a budget of its own gets: the default, else the cap, else unlimited. */
export function defaultBudget(limits: BudgetLimits): Budget {
  const tokens = limits.defaultTokens ?? limits.maxTokens;
  return {
    max_total_tokens:
      tokens === null || limits.maxTokens === null ? tokens : Math.min(tokens, limits.maxTokens),
  };
}

/** A budget a client asked for: refused when above the cap (unlimited is above any cap). */
export function requireWithinCap(budget: Budget, limits: BudgetLimits): Budget {
  const cap = limits.maxTokens;
  if (cap === null) return budget;
  if (budget.max_total_tokens === null || budget.max_total_tokens > cap) {
    throw new WakeloopError(
      "invalid_request",
      `budget.max_total_tokens must be at most ${cap} on this platform; ${budget.max_total_tokens ?? "null (unlimited)"} is above it`,
      { details: { field: "budget.max_total_tokens", max: cap } },
    );
  }
  return budget;
}

/** A budget a session inherits from its agent: one saved before the cap existed is held to it. */
export function capInherited(budget: Budget, limits: BudgetLimits): Budget {
  const cap = limits.maxTokens;
  if (cap === null) return budget;
  return { ...budget, max_total_tokens: Math.min(budget.max_total_tokens ?? cap, cap) };
}

/** Budgets are spending limits, set by the tenant's owners: a member key may not choose one. */
export function requireOwnerForBudget(role: ApiKeyRole): void {
  if (role !== "owner") {
    throw new WakeloopError(
      "forbidden",
      "only an owner key may set or change a budget; yours is a member key",
    );
  }
}
