// Multipart fuzzing over raw sockets, a bounded, seeded set of cases: truncated bodies, wrong and
// missing boundaries, huge part headers, many parts, mutated bytes, slow senders. Every case
// answers (or closes) within its bound and never with a 5xx; afterwards every blob on disk has its
// file row and the scratch directory is empty.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { useService } from "../support/use-service";
import { multipart } from "../support/jobs";
import { minimalPdf } from "../support/pdf";
import { waitFor } from "../support/wait";

setDefaultTimeout(180_000);

const svc = useService({ env: { UPLOAD_TIMEOUT_S: "3" } });
let key: string;
beforeAll(async () => {
  key = (await svc.newKey()).key;
});

/** Mulberry32: a small seeded PRNG, so a failing case can be replayed. */
function prng(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Case {
  name: string;
  contentType: string;
  body: Uint8Array;
  /** Bytes actually sent (a truncated body sends fewer than Content-Length says). */
  send?: number;
  /** Milliseconds between chunks of 64 bytes (a slow sender). */
  trickleMs?: number;
}

/** Sends one request on a raw socket; resolves with the status line ("" if the server just closed). */
function send(c: Case, port: number, boundMs: number): Promise<{ status: number; ms: number }> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const head = `POST /api/v1/files HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: ${c.contentType}\r\nContent-Length: ${c.body.length}\r\nConnection: close\r\n\r\n`;
    const body = c.body.subarray(0, c.send ?? c.body.length);
    let got = "";
    const sock = connect(port, "127.0.0.1", async () => {
      sock.write(head);
      if (c.trickleMs) {
        for (let i = 0; i < body.length && !sock.destroyed; i += 64) {
          sock.write(body.subarray(i, i + 64));
          await Bun.sleep(c.trickleMs);
        }
      } else sock.write(body);
      if (c.send !== undefined && !sock.destroyed) sock.end();
    });
    const guard = setTimeout(() => {
      sock.destroy();
      reject(new Error(`${c.name}: no answer within ${boundMs} ms`));
    }, boundMs);
    const done = () => {
      clearTimeout(guard);
      const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
      resolve({ status: m ? Number(m[1]) : 0, ms: Date.now() - t0 });
    };
    sock.on("data", (d) => (got += d.toString("latin1")));
    sock.on("close", done);
    sock.on("error", () => {});
  });
}

function cases(): Case[] {
  const rnd = prng(19);
  const pdf = minimalPdf(1, "fuzz");
  const good = () =>
    multipart(
      [{ name: "file", filename: "f.pdf", contentType: "application/pdf", data: pdf }],
      "fuzzb" + Math.floor(rnd() * 1e9),
    );
  const out: Case[] = [];
  // Truncated bodies: cut at 25 offsets across the whole body.
  for (let i = 0; i < 25; i++) {
    const g = good();
    out.push({
      name: `truncated-${i}`,
      contentType: g.contentType,
      body: g.body,
      send: Math.floor(rnd() * g.body.length),
    });
  }
  // Wrong, missing, empty, quoted-odd and overlong boundaries.
  const g = good();
  for (const ct of [
    "multipart/form-data; boundary=other",
    "multipart/form-data",
    "multipart/form-data; boundary=",
    'multipart/form-data; boundary="',
    `multipart/form-data; boundary=${"x".repeat(5000)}`,
    "multipart/form-data; boundary=\u00ff\u00fe",
    "multipart/mixed; boundary=fuzz",
    "multipart/form-data;;;boundary=;",
  ])
    out.push({ name: `boundary ${ct.slice(0, 40)}`, contentType: ct, body: g.body });
  // Huge part headers, and a header block that never ends.
  for (const size of [1_000, 15_000, 17_000, 100_000, 1_000_000]) {
    const b = "hugeh";
    const body = Buffer.concat([
      Buffer.from(
        `--${b}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nX-Pad: ${"p".repeat(size)}\r\n\r\n`,
      ),
      pdf,
      Buffer.from(`\r\n--${b}--\r\n`),
    ]);
    out.push({ name: `huge part header ${size}`, contentType: `multipart/form-data; boundary=${b}`, body });
  }
  out.push({
    name: "headers never end",
    contentType: "multipart/form-data; boundary=nv",
    body: Buffer.from(
      `--nv\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n${"X: y\r\n".repeat(20_000)}`,
    ),
  });
  // Many parts: 2, 50 and 2,000 fields before or after the file.
  for (const n of [2, 50, 2000]) {
    const parts = Array.from({ length: n }, (_, i) => ({ name: `f${i}`, data: "v" }));
    const m = multipart([...parts, { name: "file", filename: "a.pdf", contentType: "application/pdf", data: pdf }]);
    out.push({ name: `${n} parts`, contentType: m.contentType, body: m.body });
  }
  // Many `file` parts.
  const many = multipart(
    Array.from({ length: 300 }, () => ({ name: "file", filename: "a.pdf", contentType: "application/pdf", data: pdf })),
  );
  out.push({ name: "300 file parts", contentType: many.contentType, body: many.body });
  // Random byte mutations in the first 300 bytes (headers and the first boundary).
  for (let i = 0; i < 30; i++) {
    const m = good();
    const body = Uint8Array.from(m.body);
    for (let k = 0; k < 1 + Math.floor(rnd() * 6); k++)
      body[Math.floor(rnd() * Math.min(300, body.length))] = Math.floor(rnd() * 256);
    out.push({ name: `mutated-${i}`, contentType: m.contentType, body });
  }
  // Random garbage bodies.
  for (let i = 0; i < 10; i++) {
    const body = Uint8Array.from({ length: Math.floor(rnd() * 5000) }, () => Math.floor(rnd() * 256));
    out.push({ name: `garbage-${i}`, contentType: "multipart/form-data; boundary=fuzz", body });
  }
  // Slow senders: one that completes within UPLOAD_TIMEOUT_S, two that do not (one truncated).
  const s1 = good();
  out.push({ name: "slow but in time", contentType: s1.contentType, body: s1.body, trickleMs: 5 });
  out.push({ name: "too slow", contentType: s1.contentType, body: s1.body, trickleMs: 400 });
  out.push({
    name: "too slow, truncated",
    contentType: s1.contentType,
    body: s1.body,
    send: Math.floor(s1.body.length / 2),
    trickleMs: 400,
  });
  return out;
}

describe("multipart fuzz", () => {
  test("every case answers within its bound without a 5xx; nothing orphaned", async () => {
    const port = Number(new URL(svc.origin).port);
    const all = cases();
    const results: string[] = [];
    for (const c of all) {
      // Keep the key's token bucket full so no case is answered 429 instead of being parsed.
      await svc.sql`UPDATE rate_buckets SET tokens = 30, refilled_at = now()`;
      const r = await send(c, port, 15_000);
      results.push(`${c.name}: ${r.status}`);
      expect(r.status < 500 ? "ok" : `${c.name} answered ${r.status}`).toBe("ok");
    }
    const statuses = new Set(results.map((r) => r.split(": ")[1]));
    const tally: Record<string, number> = {};
    for (const r of results) tally[r.split(": ")[1]!] = (tally[r.split(": ")[1]!] ?? 0) + 1;
    console.log(`multipart fuzz: ${all.length} cases, answers by status: ${JSON.stringify(tally)}`);
    expect(results).toContain("too slow: 408");
    // The cases must exercise both outcomes: refusals and accepted uploads.
    expect(statuses.has("422")).toBe(true);
    expect(statuses.has("201")).toBe(true);
    expect(all.length).toBeGreaterThanOrEqual(80);

    // Nothing orphaned: every blob has its row, no scratch file is left.
    const scratch = join(svc.dataDir, "tmp");
    await waitFor("scratch empty", () => (existsSync(scratch) ? readdirSync(scratch).length === 0 : true), 10_000, 100);
    const filesDir = join(svc.dataDir, "blobs", "files");
    const blobs = existsSync(filesDir) ? readdirSync(filesDir).flatMap((d) => readdirSync(join(filesDir, d))) : [];
    const rows = (await svc.sql`SELECT id::text FROM files WHERE status = 'ready'`).map((r) => r.id);
    expect(blobs.sort()).toEqual(rows.sort());
    // The server still serves.
    expect((await fetch(`${svc.baseUrl}/account`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
  });
});
