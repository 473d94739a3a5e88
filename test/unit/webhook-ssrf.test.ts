// The address classifier behind the webhook SSRF guard: only public unicast addresses pass.
import { describe, expect, test } from "bun:test";
import {
  canonicalAddress,
  classifyAddress,
  isPublicAddress,
  resolveTarget,
  TargetRefused,
} from "../../src/delivery/ssrf-guard";

const refused: [string, string][] = [
  ["0.0.0.0", "unspecified"],
  ["0.1.2.3", "unspecified"],
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["10.0.0.1", "private"],
  ["172.16.0.1", "private"],
  ["172.31.255.255", "private"],
  ["192.168.1.1", "private"],
  ["100.64.0.1", "shared"],
  ["100.127.255.255", "shared"],
  ["169.254.169.254", "link_local"],
  ["192.0.0.8", "reserved"],
  ["192.0.2.1", "documentation"],
  ["198.51.100.7", "documentation"],
  ["203.0.113.9", "documentation"],
  ["198.18.0.1", "benchmarking"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast"],
  ["240.0.0.1", "reserved"],
  ["255.255.255.255", "broadcast"],
  ["::", "unspecified"],
  ["::1", "loopback"],
  ["0:0:0:0:0:0:0:1", "loopback"],
  ["::ffff:127.0.0.1", "ipv4_mapped"],
  ["::ffff:8.8.8.8", "ipv4_mapped"],
  ["::ffff:7f00:1", "ipv4_mapped"],
  ["::127.0.0.1", "reserved"],
  ["fe80::1", "link_local"],
  ["febf::1", "link_local"],
  ["fec0::1", "site_local"],
  ["fc00::1", "unique_local"],
  ["fd12:3456::1", "unique_local"],
  ["ff02::1", "multicast"],
  ["2001:db8::1", "documentation"],
  ["2001::1", "reserved"],
  ["64:ff9b::a00:1", "private"],
  ["64:ff9b::127.0.0.1", "loopback"],
  ["2002:a00:1::", "private"],
  ["2002:7f00:1::1", "loopback"],
  ["100::1", "reserved"],
  ["4000::1", "reserved"],
];

const allowed = [
  "8.8.8.8",
  "1.1.1.1",
  "93.184.216.34",
  "172.32.0.1",
  "100.128.0.1",
  "169.255.0.1",
  "2606:4700:4700::1111",
  "2a00:1450:4001:80b::200e",
  "64:ff9b::808:808",
  "2002:808:808::1",
];

describe("webhook target address classifier", () => {
  for (const [addr, cls] of refused) {
    test(`${addr} is refused as ${cls}`, () => {
      expect(classifyAddress(addr)).toBe(cls as never);
      expect(isPublicAddress(addr)).toBe(false);
    });
  }
  for (const addr of allowed) {
    test(`${addr} is public`, () => {
      expect(classifyAddress(addr)).toBe("public");
    });
  }
  test("non-addresses and zone ids are invalid", () => {
    for (const a of [
      "",
      "localhost",
      "1.2.3",
      "256.1.1.1",
      "1.2.3.4.5",
      "fe80::1%eth0",
      "1::2::3",
      "12345::1",
      "example.com",
    ]) {
      expect(classifyAddress(a)).toBe("invalid");
    }
  });
  test("IPv4-mapped IPv6 compares equal to its IPv4 address", () => {
    expect(canonicalAddress("::ffff:127.0.0.1")).toBe(canonicalAddress("127.0.0.1"));
    expect(canonicalAddress("0:0::1")).toBe(canonicalAddress("::1"));
    expect(canonicalAddress("10.0.0.1")).not.toBe(canonicalAddress("10.0.0.2"));
  });
});

describe("resolveTarget without the private-targets override", () => {
  test("refuses address literals of non-public addresses", async () => {
    for (const host of ["127.0.0.1", "10.0.0.1", "169.254.169.254", "::1"]) {
      const err = await resolveTarget(host, { allowPrivate: false }).catch((e) => e);
      expect(err).toBeInstanceOf(TargetRefused);
      expect((err as TargetRefused).kind).toBe("blocked");
    }
  });
  test("refuses a hostname that resolves to loopback (localhost)", async () => {
    const err = await resolveTarget("localhost", { allowPrivate: false }).catch((e) => e);
    expect(err).toBeInstanceOf(TargetRefused);
    expect((err as Error).message).toContain("localhost resolves to");
  });
  test("passes a public address literal without any DNS lookup", async () => {
    expect(await resolveTarget("93.184.216.34", { allowPrivate: false })).toEqual([
      { address: "93.184.216.34", family: 4 },
    ]);
  });
  test("with the override, loopback is allowed", async () => {
    const r = await resolveTarget("localhost", { allowPrivate: true });
    expect(r.length).toBeGreaterThan(0);
  });
});
