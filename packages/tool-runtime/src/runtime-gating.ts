import type { AvailabilityFact, SandboxStatusValue, ToolDefinition } from "@wakeloop/contracts";
import type { Exclusion } from "./effective-tool-set";

/**
 * Facts about the session that change while it runs, read from its state (never probed): the harness
 * recomputes the effective set each turn, so a tool comes back as soon as its fact holds again.
 */
export interface RuntimeFacts {
  /** From the last `sandbox.status` event; null when the session has no sandbox (yet). */
  sandboxStatus: SandboxStatusValue | null;
  memoryReady: boolean;
  /** The operator configured a search backend (a platform setting, the same for every session). */
  webSearch: boolean;
  /**
   * The image of the session's environment and whether it is one of the platform's browser images
   * (`SANDBOX_BROWSER_IMAGES`); null when the session has no environment.
   */
  sandboxImage: { name: string; browser: boolean } | null;
}

/** The facts plus what the gating also needs from the policy context (root or child session). */
export interface GatingFacts extends RuntimeFacts {
  subSessionDepth: number;
}

export interface GatingResult<T extends ToolDefinition> {
  tools: T[];
  excluded: Exclusion[];
}

/** Removes tools whose `availability` facts do not hold; each removal is a `runtime_gating` exclusion. */
export function applyRuntimeGating<T extends ToolDefinition>(
  tools: readonly T[],
  facts: GatingFacts,
): GatingResult<T> {
  const kept: T[] = [];
  const excluded: Exclusion[] = [];
  for (const tool of tools) {
    const unmet = tool.availability.find((fact) => unmetReason(fact, facts) !== null);
    if (unmet === undefined) {
      kept.push(tool);
      continue;
    }
    excluded.push({
      tool: tool.name,
      step: "runtime_gating",
      rule: `availability:${unmet}`,
      reason: `needs ${unmet}; ${unmetReason(unmet, facts)}`,
    });
  }
  return { tools: kept, excluded };
}

function unmetReason(fact: AvailabilityFact, facts: GatingFacts): string | null {
  switch (fact) {
    case "sandbox.ready":
      if (facts.sandboxStatus === "ready") return null;
      if (facts.sandboxStatus === null) return "the session has no sandbox yet";
      return facts.sandboxStatus === "error" ? "the sandbox failed" : `the sandbox is ${facts.sandboxStatus}`;
    case "sandbox.browser":
      if (facts.sandboxImage === null) return "the session has no environment, so no sandbox image";
      if (facts.sandboxImage.browser) return null;
      return (
        `the environment's image ${facts.sandboxImage.name} has no browser; set environment.config.image ` +
        "to a browser image (SANDBOX_BROWSER_IMAGES, e.g. wakeloop-sandbox-browser:bookworm)"
      );
    case "session.is_child":
      return facts.subSessionDepth > 0 ? null : "this is a root session";
    case "session.is_root":
      return facts.subSessionDepth === 0 ? null : `this is a sub-session (depth ${facts.subSessionDepth})`;
    case "memory.ready":
      return facts.memoryReady ? null : "the memory service is not ready";
    case "web.search":
      return facts.webSearch ? null : "the operator configured no search backend (WEB_SEARCH_URL)";
  }
}
