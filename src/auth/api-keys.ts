// API key material: generation, the stored hash, and the constant-time comparison.
// A key is `svk_<mode>_<40 base62 chars>`; its first 12 secret chars find the row, and the
// SHA-256 of the whole key (high-entropy, so a fast hash is enough) is what we store.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Mode } from "../domain/scopes";

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const secretLength = 40;
const lookupLength = 12;
const keyPattern = /^svk_(live|test)_([0-9A-Za-z]{40})$/;

function base62(n: number): string {
  // Rejection sampling keeps every character uniformly likely.
  let out = "";
  while (out.length < n) {
    for (const b of randomBytes(n * 2)) {
      if (b < 248 && out.length < n) out += alphabet[b % 62];
    }
  }
  return out;
}

export interface NewKey {
  key: string;
  lookup: string;
  hash: Buffer;
  last4: string;
}

export function generateKey(mode: Mode): NewKey {
  const secret = base62(secretLength);
  const key = `svk_${mode}_${secret}`;
  return { key, lookup: secret.slice(0, lookupLength), hash: hashKey(key), last4: secret.slice(-4) };
}

export function hashKey(key: string): Buffer {
  return createHash("sha256").update(key, "utf8").digest();
}

export interface ParsedKey {
  mode: Mode;
  lookup: string;
}

export function parseKey(key: string): ParsedKey | null {
  const m = keyPattern.exec(key);
  if (!m) return null;
  return { mode: m[1] as Mode, lookup: m[2]!.slice(0, lookupLength) };
}

export function keyMatches(key: string, storedHash: Uint8Array): boolean {
  const h = hashKey(key);
  return storedHash.length === h.length && timingSafeEqual(h, storedHash);
}
