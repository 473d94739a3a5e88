// One delivery attempt against real local receivers: headers, signature, redirects, timeouts,
// interim responses, refused targets and the TLS path (SNI and certificate checked against the
// URL's hostname while the connection goes to the resolved address).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer } from "node:net";
import Stripe from "stripe";
import { deliverOnce } from "../../src/delivery/deliver";
import { makeLocalhostCert, type LocalhostCert } from "../support/localhost-cert";

const secret = "whsec_unit";
const body = JSON.stringify({ id: "evt_unit", object: "event", type: "webhook.test", data: { object: {} } });
const seen: { path: string; headers: Record<string, string>; body: string }[] = [];

const receiver = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const url = new URL(req.url);
    seen.push({ path: url.pathname + url.search, headers: Object.fromEntries(req.headers), body: await req.text() });
    if (url.pathname === "/redirect")
      return new Response(null, { status: 307, headers: { location: "http://127.0.0.1:1/elsewhere" } });
    if (url.pathname === "/fail") return new Response("nope", { status: 503 });
    if (url.pathname === "/slow") {
      await Bun.sleep(3000);
      return new Response("late");
    }
    if (url.pathname === "/big") return new Response("x".repeat(5_000_000));
    return new Response("ok");
  },
});
const base = `http://127.0.0.1:${receiver.port}`;

// A raw TCP receiver for answers Bun.serve cannot produce (interim 1xx, oversized heads).
const raw = createServer((sock) => {
  sock.once("data", (d) => {
    const path = d.toString("latin1").split(" ")[1];
    if (path === "/interim")
      sock.end(
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
      );
    else if (path === "/hugehead") sock.end("HTTP/1.1 200 OK\r\nX-Pad: " + "a".repeat(100_000) + "\r\n\r\n");
    else if (path === "/garbage") sock.end("SSH-2.0-OpenSSH\r\n\r\n");
    else sock.end();
  });
});
let rawPort = 0;

let tls: LocalhostCert;
let tlsServer: ReturnType<typeof Bun.serve>;
let ca = "";

beforeAll(async () => {
  await new Promise<void>((r) => raw.listen(0, "127.0.0.1", () => r()));
  rawPort = (raw.address() as { port: number }).port;
  tls = makeLocalhostCert("webhook-deliver");
  ca = tls.cert;
  tlsServer = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: tls.cert, key: tls.key },
    fetch: (req) => new Response(null, { status: req.headers.get("host")?.startsWith("localhost:") ? 200 : 421 }),
  });
});

afterAll(() => {
  receiver.stop(true);
  raw.close();
  tlsServer?.stop(true);
  tls?.remove();
});

const attempt = (url: string, extra: Partial<Parameters<typeof deliverOnce>[0]> = {}) =>
  deliverOnce({ url, secret, eventType: "webhook.test", body, allowPrivate: true, ...extra });

describe("a delivery attempt", () => {
  test("POSTs the body with Service-Event, Service-Signature and Content-Type: application/json, path and query kept", async () => {
    seen.length = 0;
    const r = await attempt(`${base}/hook?x=1#frag`);
    expect(r).toMatchObject({ ok: true, responseStatus: 200, error: null, address: "127.0.0.1" });
    expect(seen).toHaveLength(1);
    const got = seen[0]!;
    expect(got.path).toBe("/hook?x=1");
    expect(got.body).toBe(body);
    expect(got.headers["content-type"]).toBe("application/json");
    expect(got.headers["service-event"]).toBe("webhook.test");
    expect(got.headers["service-signature"]).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(got.headers.host).toBe(`127.0.0.1:${receiver.port}`);
    const event = await Stripe.webhooks.constructEventAsync(got.body, got.headers["service-signature"]!, secret);
    expect(event.id).toBe("evt_unit");
  });

  test("a non-2xx answer is a failure with its status", async () => {
    expect(await attempt(`${base}/fail`)).toMatchObject({ ok: false, responseStatus: 503, error: null });
  });

  test("redirects are not followed", async () => {
    seen.length = 0;
    const r = await attempt(`${base}/redirect`);
    expect(r).toMatchObject({ ok: false, responseStatus: 307, error: "redirects are not followed" });
    expect(seen.map((s) => s.path)).toEqual(["/redirect"]);
  });

  test("the attempt times out (10 s in production; shortened here)", async () => {
    const r = await attempt(`${base}/slow`, { timeoutMs: 500 });
    expect(r.ok).toBe(false);
    expect(r.error).toContain("timed out");
    expect(r.durationMs).toBeLessThan(2500);
  });

  test("only the response head is read, not a large body", async () => {
    const r = await attempt(`${base}/big`);
    expect(r).toMatchObject({ ok: true, responseStatus: 200 });
  });

  test("interim 1xx answers are skipped to the final status", async () => {
    expect(await attempt(`http://127.0.0.1:${rawPort}/interim`)).toMatchObject({ ok: true, responseStatus: 204 });
  });

  test("an oversized response head or a non-HTTP answer fails the attempt", async () => {
    expect((await attempt(`http://127.0.0.1:${rawPort}/hugehead`)).error).toContain("larger than");
    expect((await attempt(`http://127.0.0.1:${rawPort}/garbage`)).error).toContain("HTTP/1.x");
    expect((await attempt(`http://127.0.0.1:${rawPort}/close`)).error).toBe("connection closed before a response");
  });

  test("a closed port is a network error", async () => {
    expect(await attempt("http://127.0.0.1:1/")).toMatchObject({
      ok: false,
      responseStatus: null,
      error: "connection refused",
    });
  });

  test("without the override, a private target is refused before any connection", async () => {
    seen.length = 0;
    for (const url of [`${base}/x`, `http://localhost:${receiver.port}/x`]) {
      const r = await attempt(url, { allowPrivate: false });
      expect(r.ok).toBe(false);
      expect(r.address).toBeNull();
      expect(r.error).toContain("public internet");
    }
    expect(seen).toHaveLength(0);
  });

  test("an abort (dispatcher shutdown) ends the attempt at once and says so", async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const r = await attempt(`${base}/slow`, { signal: ac.signal });
    expect(r.aborted).toBe(true);
    expect(r.durationMs).toBeLessThan(2000);
  });
});

describe("a delivery attempt over TLS", () => {
  test("verifies the certificate against the URL's hostname while dialing the resolved address", async () => {
    const r = await attempt(`https://localhost:${tlsServer.port}/hook`, { ca });
    expect(r).toMatchObject({ ok: true, responseStatus: 200, address: "127.0.0.1" });
  });
  test("refuses a certificate that does not name the host", async () => {
    const r = await attempt(`https://127.0.0.1:${tlsServer.port}/hook`, { ca });
    expect(r.ok).toBe(false);
    expect(r.error).toContain("TLS error");
  });
  test("refuses an untrusted certificate", async () => {
    const r = await attempt(`https://localhost:${tlsServer.port}/hook`);
    expect(r.ok).toBe(false);
    expect(r.error).toContain("TLS error");
  });
});
