// Outbound safety for webhook URLs (server-side request forgery): a webhook may only reach
// public addresses. URLs are checked at create/update, and again at every delivery, where the
// host is resolved once, every address is checked, and the connection goes to that checked
// address (see deliver.ts), so a DNS answer that changes in between (rebinding) cannot slip through.
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { config } from "../config";

export type AddressClass =
  | "public"
  | "unspecified"
  | "loopback"
  | "private"
  | "shared" // 100.64.0.0/10, carrier-grade NAT
  | "link_local"
  | "multicast"
  | "broadcast"
  | "documentation"
  | "benchmarking"
  | "reserved"
  | "ipv4_mapped"
  | "unique_local"
  | "site_local"
  | "invalid";

type V4Range = [number, number, AddressClass]; // base (as uint32), prefix length, class

function v4(a: string): number {
  const p = a.split(".").map(Number);
  return ((p[0]! << 24) >>> 0) + (p[1]! << 16) + (p[2]! << 8) + p[3]!;
}

// IANA IPv4 Special-Purpose Address Registry, minus the few entries that are globally reachable
// anycast services nobody should use as a webhook target anyway.
const v4Ranges: V4Range[] = (
  [
    ["0.0.0.0", 8, "unspecified"],
    ["10.0.0.0", 8, "private"],
    ["100.64.0.0", 10, "shared"],
    ["127.0.0.0", 8, "loopback"],
    ["169.254.0.0", 16, "link_local"],
    ["172.16.0.0", 12, "private"],
    ["192.0.0.0", 24, "reserved"],
    ["192.0.2.0", 24, "documentation"],
    ["192.88.99.0", 24, "reserved"],
    ["192.168.0.0", 16, "private"],
    ["198.18.0.0", 15, "benchmarking"],
    ["198.51.100.0", 24, "documentation"],
    ["203.0.113.0", 24, "documentation"],
    ["224.0.0.0", 4, "multicast"],
    ["255.255.255.255", 32, "broadcast"],
    ["240.0.0.0", 4, "reserved"],
  ] as [string, number, AddressClass][]
).map(([a, len, c]) => [v4(a), len, c]);

function parseV4(s: string): number | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return null;
  const p = m.slice(1).map(Number);
  if (p.some((n) => n > 255)) return null;
  return v4(s);
}

function classifyV4(n: number): AddressClass {
  for (const [base, len, c] of v4Ranges) {
    const mask = len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0;
    if ((n & mask) >>> 0 === base) return c;
  }
  return "public";
}

/** 16 bytes, or null. Accepts `::`, embedded dotted IPv4 and no zone ids. */
function parseV6(s: string): Uint8Array | null {
  if (s.includes("%")) return null;
  let head = s;
  let tailV4: number | null = null;
  const lastColon = s.lastIndexOf(":");
  if (s.includes(".")) {
    tailV4 = parseV4(s.slice(lastColon + 1));
    if (tailV4 === null) return null;
    head = s.slice(0, lastColon + 1) + "0:0";
  }
  const halves = head.split("::");
  if (halves.length > 2) return null;
  const parse = (h: string) => (h === "" ? [] : h.split(":"));
  const left = parse(halves[0]!);
  const right = halves.length === 2 ? parse(halves[1]!) : [];
  const groups = halves.length === 2 ? [...left, ...Array(8 - left.length - right.length).fill("0"), ...right] : left;
  if (groups.length !== 8 || (halves.length === 2 && left.length + right.length > 7)) return null;
  const out = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    const g = groups[i]!;
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    const n = parseInt(g, 16);
    out[i * 2] = n >> 8;
    out[i * 2 + 1] = n & 0xff;
  }
  if (tailV4 !== null) {
    out[12] = tailV4 >>> 24;
    out[13] = (tailV4 >>> 16) & 0xff;
    out[14] = (tailV4 >>> 8) & 0xff;
    out[15] = tailV4 & 0xff;
  }
  return out;
}

function prefixMatch(b: Uint8Array, prefix: number[], bits: number): boolean {
  for (let i = 0; i < bits; i++) {
    const byte = i >> 3;
    const bit = 7 - (i & 7);
    if (((b[byte]! >> bit) & 1) !== (((prefix[byte] ?? 0) >> bit) & 1)) return false;
  }
  return true;
}

function embeddedV4(b: Uint8Array, offset: number): number {
  return ((b[offset]! << 24) >>> 0) + (b[offset + 1]! << 16) + (b[offset + 2]! << 8) + b[offset + 3]!;
}

function classifyV6(b: Uint8Array): AddressClass {
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  if (zero(0, 16)) return "unspecified";
  if (zero(0, 15) && b[15] === 1) return "loopback";
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return "ipv4_mapped"; // ::ffff:0:0/96
  if (zero(0, 12)) return "reserved"; // ::/96, IPv4-compatible (deprecated)
  if (prefixMatch(b, [0xff], 8)) return "multicast";
  if (prefixMatch(b, [0xfe, 0x80], 10)) return "link_local";
  if (prefixMatch(b, [0xfe, 0xc0], 10)) return "site_local";
  if (prefixMatch(b, [0xfc], 7)) return "unique_local";
  // Translation prefixes carry an IPv4 address that a gateway would connect to: judge that one.
  if (prefixMatch(b, [0x00, 0x64, 0xff, 0x9b], 96)) {
    const c = classifyV4(embeddedV4(b, 12)); // 64:ff9b::/96, NAT64
    return c === "public" ? "public" : c;
  }
  if (prefixMatch(b, [0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48)) return "reserved"; // local-use NAT64
  if (prefixMatch(b, [0x20, 0x02], 16)) {
    const c = classifyV4(embeddedV4(b, 2)); // 2002::/16, 6to4
    return c === "public" ? "public" : c;
  }
  if (prefixMatch(b, [0x20, 0x01, 0x0d, 0xb8], 32)) return "documentation";
  if (prefixMatch(b, [0x3f, 0xff], 20)) return "documentation";
  if (prefixMatch(b, [0x20, 0x01, 0x00, 0x00], 23)) return "reserved"; // IETF protocol assignments, Teredo
  if (prefixMatch(b, [0x01, 0x00], 64)) return "reserved"; // discard-only
  if (prefixMatch(b, [0x5f, 0x00], 16)) return "reserved"; // SRv6 SIDs
  // Everything outside global unicast 2000::/3 is unassigned or special.
  if (!prefixMatch(b, [0x20], 3)) return "reserved";
  return "public";
}

/** Classifies an IP address literal (no brackets). Anything that is not an address is "invalid". */
export function classifyAddress(address: string): AddressClass {
  const family = isIP(address);
  if (family === 4) {
    const n = parseV4(address);
    return n === null ? "invalid" : classifyV4(n);
  }
  if (family === 6 || address.includes(":")) {
    const b = parseV6(address);
    return b === null ? "invalid" : classifyV6(b);
  }
  return "invalid";
}

/** A canonical text for comparing addresses (IPv4-mapped IPv6 compares equal to its IPv4). */
export function canonicalAddress(address: string): string | null {
  const n = parseV4(address);
  if (n !== null) return `v4:${n}`;
  const b = parseV6(address);
  if (!b) return null;
  if (b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff) return `v4:${embeddedV4(b, 12)}`;
  return `v6:${Buffer.from(b).toString("hex")}`;
}

export function isPublicAddress(address: string): boolean {
  return classifyAddress(address) === "public";
}

const classNames: Record<AddressClass, string> = {
  public: "a public address",
  unspecified: "an unspecified address",
  loopback: "a loopback address",
  private: "a private-network address",
  shared: "a carrier-grade NAT (shared) address",
  link_local: "a link-local address",
  multicast: "a multicast address",
  broadcast: "the broadcast address",
  documentation: "a documentation-only address",
  benchmarking: "a benchmarking address",
  reserved: "a reserved address",
  ipv4_mapped: "an IPv4-mapped IPv6 address",
  unique_local: "a unique-local IPv6 address",
  site_local: "a site-local IPv6 address",
  invalid: "an invalid address",
};

export class TargetRefused extends Error {
  constructor(
    message: string,
    readonly kind: "dns" | "blocked",
  ) {
    super(message);
  }
}

export interface ResolvedTarget {
  address: string;
  family: 4 | 6;
}

/** The hostname of a URL without IPv6 brackets. */
export function bareHost(url: URL): string {
  return url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, rej) => {
      timer = setTimeout(() => rej(new TargetRefused(`${what} timed out after ${ms} ms`, "dns")), ms);
    }),
  ]);
}

/**
 * Resolves `host` (a name or an address literal) and checks every address it yields; one
 * non-public address refuses the whole host, so a round-robin answer cannot mix one in.
 * Returns the addresses, in resolver order, for the caller to connect to.
 */
export async function resolveTarget(
  host: string,
  opts: { allowPrivate?: boolean; timeoutMs?: number } = {},
): Promise<ResolvedTarget[]> {
  const allowPrivate = opts.allowPrivate ?? config.webhookAllowPrivateTargets;
  let addrs: ResolvedTarget[];
  const family = isIP(host);
  if (family) addrs = [{ address: host, family: family as 4 | 6 }];
  else {
    try {
      const found = await withTimeout(
        lookup(host, { all: true, verbatim: true }),
        opts.timeoutMs ?? 5000,
        `resolving ${host}`,
      );
      addrs = found.map((a) => ({ address: a.address, family: a.family as 4 | 6 }));
    } catch (e) {
      if (e instanceof TargetRefused) throw e;
      throw new TargetRefused(
        `could not resolve ${host} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
        "dns",
      );
    }
    if (!addrs.length) throw new TargetRefused(`could not resolve ${host}`, "dns");
  }
  if (!allowPrivate) {
    for (const a of addrs) {
      const c = classifyAddress(a.address);
      if (c !== "public") {
        const what = family ? `${a.address} is` : `${host} resolves to ${a.address},`;
        throw new TargetRefused(`${what} ${classNames[c]}; webhook URLs must reach the public internet`, "blocked");
      }
    }
  }
  return addrs;
}

/** For the delivery path: is the address a socket actually connected to still acceptable? */
export function connectedAddressAllowed(
  address: string | undefined,
  allowPrivate = config.webhookAllowPrivateTargets,
): boolean {
  if (allowPrivate) return true;
  if (!address) return false;
  return isPublicAddress(address);
}
