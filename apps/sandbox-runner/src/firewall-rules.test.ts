import { describe, expect, it } from "vitest";
import { blockedRanges, ruleTag, sandboxBridgeRules, taggedRule } from "./firewall-rules";

describe("firewall rules", () => {
  it("blocks private, CGNAT, link-local (metadata), loopback and other non-public ranges", () => {
    expect(blockedRanges()).toEqual(
      expect.arrayContaining([
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "100.64.0.0/10",
        "169.254.0.0/16",
        "127.0.0.0/8",
        "0.0.0.0/8",
        "224.0.0.0/4",
      ]),
    );
  });

  it("lets DNS through first, drops blocked ranges, then anything for the host", () => {
    const rules = sandboxBridgeRules("wlabc", ruleTag("r1", "wlabc"), ["10.255.255.53"]);
    expect(rules[0]).toEqual({
      chain: "DOCKER-USER",
      args: expect.arrayContaining(["-d", "10.255.255.53/32", "--dport", "53", "ACCEPT"]),
    });
    expect(rules.filter((rule) => rule.args.at(-1) === "DROP" && rule.chain === "DOCKER-USER")).toHaveLength(
      blockedRanges().length,
    );
    expect(rules.at(-1)).toEqual({
      chain: "INPUT",
      args: ["-i", "wlabc", "-m", "comment", "--comment", "wakeloop:r1:wlabc", "-j", "DROP"],
    });
    expect(rules.every((rule) => rule.args.includes("wakeloop:r1:wlabc"))).toBe(true);
  });

  it("reads back its own rules from iptables -S, and only those of its runner", () => {
    const line = '-A DOCKER-USER -d 10.0.0.0/8 -i wlabc -m comment --comment "wakeloop:r1:wlabc" -j DROP';
    expect(taggedRule(line, "r1")).toEqual({
      chain: "DOCKER-USER",
      args: [
        "-d",
        "10.0.0.0/8",
        "-i",
        "wlabc",
        "-m",
        "comment",
        "--comment",
        "wakeloop:r1:wlabc",
        "-j",
        "DROP",
      ],
      bridge: "wlabc",
    });
    expect(taggedRule(line, "r2")).toBeNull();
    expect(taggedRule("-A DOCKER-USER -j RETURN", "r1")).toBeNull();
    expect(taggedRule("-N DOCKER-USER", "r1")).toBeNull();
  });
});
