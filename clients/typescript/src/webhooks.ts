// Verifies a webhook delivery: `Service-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`
// compared in constant time, with a timestamp tolerance (Stripe's scheme).
import { createHmac, timingSafeEqual } from "node:crypto";
import { WebhookVerificationError } from "./errors";
import type { WebhookEvent } from "./types";

export interface VerifyOptions {
  /** Largest accepted age (and clock skew) of the signature timestamp, in seconds. */
  toleranceS?: number;
  /** Current time in unix seconds (tests). */
  now?: number;
}

/**
 * Checks the signature of a delivery and returns the parsed event; throws WebhookVerificationError
 * otherwise. `rawBody` must be the exact bytes received, before any JSON parsing.
 */
export function verify(
  rawBody: string | Uint8Array,
  signatureHeader: string | null | undefined,
  secret: string,
  opts: VerifyOptions = {},
): WebhookEvent {
  const toleranceS = opts.toleranceS ?? 300;
  if (!signatureHeader) throw new WebhookVerificationError("no Service-Signature header");
  let t: string | undefined;
  const signatures: string[] = [];
  for (const part of signatureHeader.split(",")) {
    const i = part.indexOf("=");
    const k = part.slice(0, i).trim();
    const v = part.slice(i + 1).trim();
    if (k === "t") t = v;
    else if (k === "v1") signatures.push(v);
  }
  if (!t || !/^\d+$/.test(t) || signatures.length === 0)
    throw new WebhookVerificationError("malformed Service-Signature header (expected t=<unix>,v1=<hex>)");
  const body =
    typeof rawBody === "string"
      ? Buffer.from(rawBody, "utf8")
      : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  const expected = createHmac("sha256", secret).update(`${t}.`).update(body).digest();
  const matches = signatures.some((hex) => {
    const given = /^[0-9a-f]+$/i.test(hex) ? Buffer.from(hex, "hex") : Buffer.alloc(0);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError("signature does not match the body and secret");
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(t)) > toleranceS)
    throw new WebhookVerificationError(`timestamp outside the tolerance of ${toleranceS} s`);
  return JSON.parse(body.toString("utf8")) as WebhookEvent;
}
