// The webhook signature scheme: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">.
import { describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import Stripe from "stripe";
import { computeSignature, signatureHeader, verifySignature } from "../../src/delivery/sign";

const secret = "whsec_test_secret_value";
const body = '{"id":"evt_1","object":"event","type":"webhook.test"}';

describe("webhook signatures", () => {
  test("v1 is the hex HMAC-SHA256 keyed with the whole whsec_ secret over '<t>.<raw body>'", () => {
    const expected = createHmac("sha256", secret).update(`1700000000.${body}`).digest("hex");
    expect(computeSignature(secret, 1700000000, body)).toBe(expected);
    expect(signatureHeader(secret, body, 1700000000)).toBe(`t=1700000000,v1=${expected}`);
  });

  test("the header has exactly the form t=<unix seconds>,v1=<64 hex>", () => {
    expect(signatureHeader(secret, body)).toMatch(/^t=\d{10},v1=[0-9a-f]{64}$/);
  });

  test("bytes and strings sign the same", () => {
    expect(computeSignature(secret, 1, Buffer.from(body))).toBe(computeSignature(secret, 1, body));
  });

  test("an independent implementation (stripe's constructEventAsync) verifies it", async () => {
    const header = signatureHeader(secret, body);
    const event = await Stripe.webhooks.constructEventAsync(body, header, secret);
    expect(event.id).toBe("evt_1");
  });

  test("stripe rejects it under another secret or for another body", async () => {
    const header = signatureHeader(secret, body);
    await expect(Stripe.webhooks.constructEventAsync(body, header, "whsec_other")).rejects.toThrow();
    await expect(Stripe.webhooks.constructEventAsync(body + " ", header, secret)).rejects.toThrow();
  });

  test("verifySignature accepts a fresh signature", () => {
    expect(verifySignature(secret, body, signatureHeader(secret, body)).ok).toBe(true);
  });

  test("verifySignature refuses a changed body, another secret, and malformed headers", () => {
    const h = signatureHeader(secret, body);
    expect(verifySignature(secret, body + "x", h)).toEqual({ ok: false, reason: "no_match" });
    expect(verifySignature("whsec_other", body, h)).toEqual({ ok: false, reason: "no_match" });
    expect(verifySignature(secret, body, "v1=abc")).toEqual({ ok: false, reason: "malformed" });
    expect(verifySignature(secret, body, "t=123")).toEqual({ ok: false, reason: "malformed" });
    expect(verifySignature(secret, body, "")).toEqual({ ok: false, reason: "malformed" });
  });

  test("verifySignature refuses timestamps older than 5 minutes (and as far in the future)", () => {
    const now = 1_800_000_000;
    expect(verifySignature(secret, body, signatureHeader(secret, body, now - 300), 300, now).ok).toBe(true);
    expect(verifySignature(secret, body, signatureHeader(secret, body, now - 301), 300, now)).toEqual({
      ok: false,
      reason: "too_old",
    });
    expect(verifySignature(secret, body, signatureHeader(secret, body, now + 301), 300, now)).toEqual({
      ok: false,
      reason: "in_future",
    });
  });

  test("verifySignature accepts any matching v1 among several (secret rollover)", () => {
    const t = Math.floor(Date.now() / 1000);
    const h = `t=${t},v1=${"0".repeat(64)},v1=${computeSignature(secret, t, body)}`;
    expect(verifySignature(secret, body, h).ok).toBe(true);
  });
});
