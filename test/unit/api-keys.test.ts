// API key material (the API spec (docs/api.md), Authentication; issue 2: keys stored as hashes and compared in
// constant time): format, lookup prefix, hash, parsing and the comparison.
import { describe, expect, spyOn, test } from "bun:test";
import * as crypto from "node:crypto";
import { generateKey, hashKey, keyMatches, parseKey } from "../../src/auth/api-keys";

describe("generateKey", () => {
  test("a key is svk_<mode>_ followed by 40 base62 characters", () => {
    expect(generateKey("test").key).toMatch(/^svk_test_[0-9A-Za-z]{40}$/);
    expect(generateKey("live").key).toMatch(/^svk_live_[0-9A-Za-z]{40}$/);
  });

  test("the lookup is the first 12 secret characters, last4 the last four, the hash SHA-256 of the whole key", () => {
    const k = generateKey("live");
    const secret = k.key.slice("svk_live_".length);
    expect(k.lookup).toBe(secret.slice(0, 12));
    expect(k.last4).toBe(secret.slice(-4));
    expect(k.hash.length).toBe(32);
    expect(k.hash.equals(crypto.createHash("sha256").update(k.key).digest())).toBe(true);
    expect(k.hash.equals(hashKey(k.key))).toBe(true);
  });

  test("keys are unique and every base62 character is used about equally often", () => {
    const keys = Array.from({ length: 2000 }, () => generateKey("test"));
    expect(new Set(keys.map((k) => k.key)).size).toBe(keys.length);
    expect(new Set(keys.map((k) => k.lookup)).size).toBe(keys.length);
    const counts = new Map<string, number>();
    for (const k of keys) for (const ch of k.key.slice(9)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // 80,000 characters over 62 symbols: ~1290 each; a modulo bias or a missing range would show.
    for (const [ch, n] of counts) expect({ ch, ok: n > 1050 && n < 1550 }).toEqual({ ch, ok: true });
  });
});

describe("parseKey", () => {
  test("returns the mode from the prefix and the lookup", () => {
    const k = generateKey("test");
    expect(parseKey(k.key)).toEqual({ mode: "test", lookup: k.lookup });
    const l = generateKey("live");
    expect(parseKey(l.key)).toEqual({ mode: "live", lookup: l.lookup });
  });

  test("refuses anything that is not exactly a key", () => {
    const k = generateKey("test").key;
    for (const bad of [
      "",
      "svk_test_",
      k.slice(0, -1),
      k + "a",
      k.replace("svk_test_", "svk_prod_"),
      k.replace("svk_test_", "SVK_TEST_"),
      k.replace("svk_test_", "sk_test_"),
      ` ${k}`,
      `${k} `,
      k.slice(0, -1) + "-",
      k.slice(0, -1) + "é",
      `Bearer ${k}`,
    ]) {
      expect({ bad, parsed: parseKey(bad) }).toEqual({ bad, parsed: null });
    }
  });
});

describe("keyMatches", () => {
  test("matches the key's own hash and nothing else", () => {
    const a = generateKey("test");
    const b = generateKey("test");
    expect(keyMatches(a.key, a.hash)).toBe(true);
    expect(keyMatches(b.key, a.hash)).toBe(false);
    expect(keyMatches(a.key.slice(0, -1) + (a.key.endsWith("A") ? "B" : "A"), a.hash)).toBe(false);
  });

  test("a stored hash of another length is a mismatch, not an exception", () => {
    const a = generateKey("test");
    expect(keyMatches(a.key, new Uint8Array(0))).toBe(false);
    expect(keyMatches(a.key, a.hash.subarray(0, 16))).toBe(false);
    expect(keyMatches(a.key, Buffer.concat([a.hash, Buffer.from([0])]))).toBe(false);
  });

  test("compares in constant time (crypto.timingSafeEqual over fixed-length digests)", () => {
    const spy = spyOn(crypto, "timingSafeEqual");
    try {
      const a = generateKey("live");
      const b = generateKey("live");
      keyMatches(a.key, a.hash);
      keyMatches(b.key, a.hash);
      expect(spy).toHaveBeenCalledTimes(2);
      for (const [x, y] of spy.mock.calls) {
        expect((x as Uint8Array).length).toBe(32);
        expect((y as Uint8Array).length).toBe(32);
      }
    } finally {
      spy.mockRestore();
    }
  });
});
