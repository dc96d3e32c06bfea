import ipaddr from "ipaddr.js";

// The packet filter rules that fence a sandbox network in. Docker evaluates DOCKER-USER before its
// own FORWARD rules (and keeps it across restarts), so drops there win over Docker's accepts; the
// host's own addresses are reached through INPUT, not FORWARD, hence a rule there too.

type Cidr = [ipaddr.IPv4, number];

/**
 * Every IPv4 range that is not ordinary public unicast (private, CGNAT, link-local incl. the metadata
 * address, loopback, reserved, multicast…), from the table behind ipaddr.js's `range()`, so the fence
 * and the library's classification cannot drift apart. The table is untyped, hence the cast.
 */
export function blockedRanges(): string[] {
  const table = (ipaddr.IPv4.prototype as unknown as { SpecialRanges: Record<string, Cidr | Cidr[]> })
    .SpecialRanges;
  return Object.entries(table)
    .filter(([name]) => name !== "unicast")
    .flatMap(([, ranges]) => (Array.isArray(ranges[0]) ? (ranges as Cidr[]) : [ranges as Cidr]))
    .map(([address, bits]) => `${address.toString()}/${bits}`);
}

export type FirewallRule = { chain: "DOCKER-USER" | "INPUT"; args: string[] };

/** Tags every rule of one runner's bridge, so the runner finds its own rules again after a restart. */
export function ruleTag(runnerId: string, bridge: string): string {
  return `wakeloop:${runnerId}:${bridge}`;
}

/**
 * The rules of one sandbox bridge, in evaluation order: the operator's DNS resolvers on port 53 (a
 * resolver on a private address is common), then a drop of every blocked range, then a drop of
 * anything for the host itself (its own addresses and the ports it publishes for other containers).
 */
export function sandboxBridgeRules(
  bridge: string,
  tag: string,
  dnsServers: readonly string[],
): FirewallRule[] {
  const comment = ["-m", "comment", "--comment", tag];
  const dns = dnsServers.flatMap((server) =>
    ["udp", "tcp"].map(
      (protocol): FirewallRule => ({
        chain: "DOCKER-USER",
        args: [
          "-i",
          bridge,
          "-d",
          `${server}/32`,
          "-p",
          protocol,
          "--dport",
          "53",
          ...comment,
          "-j",
          "ACCEPT",
        ],
      }),
    ),
  );
  const blocked = blockedRanges().map(
    (range): FirewallRule => ({
      chain: "DOCKER-USER",
      args: ["-i", bridge, "-d", range, ...comment, "-j", "DROP"],
    }),
  );
  return [...dns, ...blocked, { chain: "INPUT", args: ["-i", bridge, ...comment, "-j", "DROP"] }];
}

/** One `iptables -S <chain>` line as the arguments that delete it, when it carries a tag of `runnerId`. */
export function taggedRule(
  line: string,
  runnerId: string,
): { chain: string; args: string[]; bridge: string } | null {
  const tokens = (line.match(/"[^"]*"|\S+/g) ?? []).map((token) => token.replace(/^"(.*)"$/, "$1"));
  const [append, chain, ...args] = tokens;
  if (append !== "-A" || chain === undefined) return null;
  const comment = args[args.indexOf("--comment") + 1];
  const prefix = `wakeloop:${runnerId}:`;
  if (!args.includes("--comment") || comment === undefined || !comment.startsWith(prefix)) return null;
  return { chain, args, bridge: comment.slice(prefix.length) };
}
