import { describe, expect, it } from "vitest";
import { checkAddress, checkEgressUrl, type EgressPolicy, isAllowedHost } from "./egress-policy";
import { resolveAllowedAddress } from "./guarded-dispatcher";

const none: EgressPolicy = { allowedHosts: [] };
const refused = (range: string) =>
  expect.objectContaining({ code: "egress_refused", details: expect.objectContaining({ range }) });

describe("checkEgressUrl", () => {
  it.each([
    ["http://127.0.0.1:4010/v1", "loopback"],
    ["http://2130706433/v1", "loopback"],
    ["http://0x7f.0.0.1/", "loopback"],
    ["http://0177.0.0.1/", "loopback"],
    ["http://127.1/", "loopback"],
    ["http://0x7f000001/", "loopback"],
    ["http://169.254.169.254/latest/meta-data", "linkLocal"],
    ["http://0xa9.0xfe.0xa9.0xfe/", "linkLocal"],
    ["http://[::1]:8080/", "loopback"],
    ["http://[::ffff:127.0.0.1]/", "ipv4Mapped loopback"],
    ["http://[::ffff:169.254.169.254]/", "ipv4Mapped linkLocal"],
    ["http://[fd00:ec2::254]/", "uniqueLocal"],
    ["http://100.100.100.200/", "carrierGradeNat"],
    ["http://0.0.0.0:8080/", "unspecified"],
    ["http://10.0.0.5/", "private"],
  ])("refuses %s (%s) when the operator did not allow it", (url, range) => {
    expect(() => checkEgressUrl(none, url)).toThrow(refused(range));
  });

  it("names the rule in the message", () => {
    expect(() => checkEgressUrl(none, "http://2130706433/")).toThrow(
      /127\.0\.0\.1 is refused: loopback addresses are reachable only for hosts on the operator's egress allowlist/,
    );
  });

  it("passes public literals and host names (those are resolved and checked at request time)", () => {
    expect(checkEgressUrl(none, "https://8.8.8.8/v1").hostname).toBe("8.8.8.8");
    expect(checkEgressUrl(none, "https://api.example.com/v1").hostname).toBe("api.example.com");
  });

  it("passes an internal literal the operator allowed, in any spelling the URL normalizes", () => {
    const policy: EgressPolicy = { allowedHosts: ["127.0.0.1", "[::1]"] };
    expect(() => checkEgressUrl(policy, "http://2130706433:4010/v1")).not.toThrow();
    expect(() => checkEgressUrl(policy, "http://[0:0::1]/")).not.toThrow();
    expect(() => checkEgressUrl(policy, "http://127.0.0.2/")).toThrow(refused("loopback"));
  });

  it("refuses schemes other than http and https", () => {
    expect(() => checkEgressUrl(none, "file:///etc/passwd")).toThrow(
      expect.objectContaining({ code: "egress_refused" }),
    );
  });
});

describe("checkAddress and the allowlist", () => {
  it("matches hosts case-insensitively and ignores a trailing dot", () => {
    expect(isAllowedHost({ allowedHosts: ["VLLM.internal"] }, "vllm.internal.")).toBe(true);
    expect(isAllowedHost({ allowedHosts: ["vllm.internal"] }, "evil-vllm.internal")).toBe(false);
  });

  it("lets an allowed name reach an internal address, and nothing else", () => {
    const policy: EgressPolicy = { allowedHosts: ["vllm.internal"] };
    expect(() => checkAddress(policy, "vllm.internal", "10.0.0.7")).not.toThrow();
    expect(() => checkAddress(policy, "other.internal", "10.0.0.7")).toThrow(refused("private"));
  });
});

describe("resolveAllowedAddress", () => {
  const resolving =
    (table: Record<string, string[]>) =>
    async (host: string): Promise<string[]> =>
      table[host] ?? [];

  it("refuses a name that resolves to an internal address", async () => {
    const resolve = resolving({ "metadata.evil.test": ["169.254.169.254"] });
    await expect(resolveAllowedAddress(none, "metadata.evil.test", resolve)).rejects.toThrow(
      refused("linkLocal"),
    );
  });

  it("refuses a name whose records mix public and internal addresses", async () => {
    const resolve = resolving({ "mixed.test": ["8.8.8.8", "::ffff:127.0.0.1"] });
    await expect(resolveAllowedAddress(none, "mixed.test", resolve)).rejects.toThrow(
      refused("ipv4Mapped loopback"),
    );
  });

  it("pins the first checked address", async () => {
    const resolve = resolving({ "api.test": ["1.1.1.1", "8.8.8.8"] });
    await expect(resolveAllowedAddress(none, "api.test", resolve)).resolves.toBe("1.1.1.1");
  });

  it("checks a literal without resolving it", async () => {
    const resolve = async () => {
      throw new Error("a literal must not be resolved");
    };
    await expect(resolveAllowedAddress(none, "[::1]", resolve)).rejects.toThrow(refused("loopback"));
    await expect(resolveAllowedAddress({ allowedHosts: ["::1"] }, "[::1]", resolve)).resolves.toBe("::1");
  });
});
