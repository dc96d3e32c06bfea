import { classifyAddress, isIpLiteral } from "./address-class";
import { EgressError } from "./egress-error";

/**
 * The operator's egress decisions. A host on `allowedHosts` may resolve to any address (a local vLLM,
 * the fake model on 127.0.0.1); every other host must resolve only to public addresses. Tenants never
 * extend this list: reaching an internal address is an operator decision.
 */
export interface EgressPolicy {
  /** Host names or IP literals, matched exactly after normalization (no wildcards, no ports). */
  allowedHosts: readonly string[];
}

/** `[::1]` → `::1`, `Example.COM.` → `example.com`: the form URL hosts and allowlist entries share. */
export function normalizeHost(host: string): string {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  return bare.toLowerCase().replace(/\.$/, "");
}

export function isAllowedHost(policy: EgressPolicy, host: string): boolean {
  const wanted = normalizeHost(host);
  return policy.allowedHosts.some((entry) => normalizeHost(entry) === wanted);
}

/**
 * Throws `egress_refused` unless `address` (what `host` resolved to, or `host` itself when it is a
 * literal) may be reached: public, or the host is on the operator's allowlist.
 */
export function checkAddress(policy: EgressPolicy, host: string, address: string): void {
  if (isAllowedHost(policy, host)) return;
  const { range, isPublic } = classifyAddress(address);
  if (isPublic) return;
  const target = normalizeHost(host) === address ? address : `${normalizeHost(host)} (${address})`;
  throw new EgressError(
    "egress_refused",
    `egress to ${target} is refused: ${range} addresses are reachable only for hosts on the operator's egress allowlist`,
    { host: normalizeHost(host), address, range },
  );
}

/**
 * The save-time check of a URL a tenant gives (an agent's `base_url`): http(s) only, and a literal
 * refused address is refused now. A host name is checked again, resolved, at request time.
 */
export function checkEgressUrl(policy: EgressPolicy, url: string): URL {
  const parsed = new URL(url);
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new EgressError(
      "egress_refused",
      `egress to ${parsed.protocol} URLs is refused: use http or https`,
    );
  }
  const host = normalizeHost(parsed.hostname);
  if (isIpLiteral(host)) checkAddress(policy, host, host);
  return parsed;
}
