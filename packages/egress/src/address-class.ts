import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

export interface AddressClass {
  /** ipaddr.js's range name; `unicast` is the public internet. Mapped IPv6 names the IPv4 inside. */
  range: string;
  isPublic: boolean;
}

/**
 * What kind of address `address` (an IP literal, IPv6 without brackets) is. Only globally routable
 * unicast is public: loopback, private, link-local (cloud metadata at 169.254.169.254), CGNAT,
 * unspecified, multicast, broadcast, reserved, unique-local (fd00:ec2::254) and every IPv6 form that
 * embeds an IPv4 address (mapped, translated, 6to4, Teredo) are not. The ranges are ipaddr.js's.
 */
export function classifyAddress(address: string): AddressClass {
  const parsed = ipaddr.parse(address);
  const range = parsed.range();
  if (parsed.kind() === "ipv6" && range === "ipv4Mapped") {
    // `::ffff:7f00:1` is 127.0.0.1 to the kernel; naming the IPv4 class makes the refusal readable.
    const inner = (parsed as ipaddr.IPv6).toIPv4Address().range();
    return { range: `ipv4Mapped ${inner}`, isPublic: false };
  }
  return { range, isPublic: range === "unicast" };
}

/**
 * Whether `host` is an IP literal in canonical form (IPv6 without brackets). Hosts come out of WHATWG
 * URL parsing, which already turned `2130706433`, `0x7f.1` or `0177.0.0.1` into `127.0.0.1`.
 */
export function isIpLiteral(host: string): boolean {
  return isIP(host) !== 0;
}
