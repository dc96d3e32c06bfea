import type { ToolDefinition } from "@wakeloop/contracts";

/**
 * Policy selectors (contracts `ToolSelector`): a tool name (`read`), a group (`group:fs`, matched
 * against `ToolDefinition.group`) or a `*` pattern (`shell_*`, `*`) where `*` matches any run of name
 * characters. Groups are read from the registry, so a new tool joins its group with no list to update.
 */
export type SelectorTarget = Pick<ToolDefinition, "name" | "group">;

const GROUP_PREFIX = "group:";

export function isGroupSelector(selector: string): boolean {
  return selector.startsWith(GROUP_PREFIX);
}

export function isPatternSelector(selector: string): boolean {
  return !isGroupSelector(selector) && selector.includes("*");
}

export function groupSelector(group: string): string {
  return `${GROUP_PREFIX}${group}`;
}

export function selectorMatches(selector: string, tool: SelectorTarget): boolean {
  if (isGroupSelector(selector)) return selector.slice(GROUP_PREFIX.length) === tool.group;
  if (!selector.includes("*")) return selector === tool.name;
  return patternRegExp(selector).test(tool.name);
}

/** The first selector of the list that matches the tool, for a readable exclusion reason. */
export function firstMatch(
  selectors: readonly string[] | undefined,
  tool: SelectorTarget,
): string | undefined {
  return selectors?.find((selector) => selectorMatches(selector, tool));
}

function patternRegExp(pattern: string): RegExp {
  // Selectors are restricted to [a-z0-9_*] by the contract, so only `*` needs translating.
  const body = pattern
    .split("*")
    .map((part) => part.replace(/[^a-z0-9_]/g, ""))
    .join("[a-z0-9_]*");
  return new RegExp(`^${body}$`);
}
