import { describe, expect, it } from "vitest";
import { classifyAddress } from "./address-class";

describe("classifyAddress", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "linkLocal"],
    ["100.64.0.1", "carrierGradeNat"],
    ["100.100.100.200", "carrierGradeNat"],
    ["0.0.0.0", "unspecified"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["192.0.0.192", "reserved"],
    ["240.0.0.1", "reserved"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fe80::1", "linkLocal"],
    ["fd00:ec2::254", "uniqueLocal"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "ipv4Mapped loopback"],
    ["::ffff:a9fe:a9fe", "ipv4Mapped linkLocal"],
    ["::ffff:10.0.0.1", "ipv4Mapped private"],
    ["::127.0.0.1", "ipv4Mapped loopback"],
    ["64:ff9b::7f00:1", "rfc6052"],
    ["2002:7f00:1::", "6to4"],
    ["2001::1", "teredo"],
  ])("%s is %s and not public", (address, range) => {
    expect(classifyAddress(address)).toEqual({ range, isPublic: false });
  });

  it.each(["8.8.8.8", "1.1.1.1", "2606:4700::1111"])("%s is public", (address) => {
    expect(classifyAddress(address)).toEqual({ range: "unicast", isPublic: true });
  });

  it("refuses a mapped public IPv4 too: no IPv6 form of an IPv4 address is ever reached", () => {
    expect(classifyAddress("::ffff:8.8.8.8").isPublic).toBe(false);
  });
});
