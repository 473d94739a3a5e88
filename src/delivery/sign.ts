// The webhook signature scheme (docs/webhooks.md, Delivery): `Service-Signature:
// t=<unix seconds>,v1=<hex HMAC-SHA256 over "<t>.<raw body>">`, keyed with the endpoint's
// whole `whsec_...` secret as UTF-8 bytes — the same scheme Stripe uses, so its libraries verify it.
import { createHmac, timingSafeEqual } from "node:crypto";

export const signatureToleranceS = 300;

export function computeSignature(secret: string, timestamp: number, rawBody: string | Uint8Array): string {
  const mac = createHmac("sha256", secret);
  mac.update(`${timestamp}.`);
  mac.update(rawBody);
  return mac.digest("hex");
}

/** The `Service-Signature` header value for `rawBody` signed at `timestamp` (unix seconds). */
export function signatureHeader(
  secret: string,
  rawBody: string | Uint8Array,
  timestamp = Math.floor(Date.now() / 1000),
): string {
  return `t=${timestamp},v1=${computeSignature(secret, timestamp, rawBody)}`;
}

export type VerifyResult =
  | { ok: true; timestamp: number }
  | { ok: false; reason: "malformed" | "no_match" | "too_old" | "in_future" };

/**
 * Receiver-side check, as docs/webhooks.md's receiver guide describes it: parse `t` and every `v1`,
 * compare in constant time, and refuse timestamps outside the tolerance (5 minutes).
 */
export function verifySignature(
  secret: string,
  rawBody: string | Uint8Array,
  header: string,
  toleranceS = signatureToleranceS,
  now = Math.floor(Date.now() / 1000),
): VerifyResult {
  let t: number | null = null;
  const v1: string[] = [];
  for (const part of header.split(",")) {
    const i = part.indexOf("=");
    if (i < 0) continue;
    const k = part.slice(0, i).trim();
    const v = part.slice(i + 1).trim();
    if (k === "t" && /^\d{1,12}$/.test(v)) t = Number(v);
    else if (k === "v1" && /^[0-9a-f]{64}$/i.test(v)) v1.push(v.toLowerCase());
  }
  if (t === null || v1.length === 0) return { ok: false, reason: "malformed" };
  const expected = Buffer.from(computeSignature(secret, t, rawBody), "hex");
  const match = v1.some((s) => timingSafeEqual(Buffer.from(s, "hex"), expected));
  if (!match) return { ok: false, reason: "no_match" };
  if (now - t > toleranceS) return { ok: false, reason: "too_old" };
  if (t - now > toleranceS) return { ok: false, reason: "in_future" };
  return { ok: true, timestamp: t };
}
