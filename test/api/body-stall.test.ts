// A request body that stalls (no byte for BODY_STALL_TIMEOUT_S, an extension) is cut with
// 408 request_timeout in the envelope, long before UPLOAD_TIMEOUT_S, and nothing is stored:
// an upload that stops half-way, and a JSON body that stops half-way.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { useService } from "../support/use-service";
import { multipart } from "../support/jobs";
import { minimalPdf } from "../support/pdf";

setDefaultTimeout(60_000);

const svc = useService({ env: { BODY_STALL_TIMEOUT_S: "2", UPLOAD_TIMEOUT_S: "900" } });
let key: string;
beforeAll(async () => {
  key = (await svc.newKey()).key;
});

/** Sends the head and `sent` bytes of a body announced as `total` bytes, then nothing; resolves with the raw answer. */
function stalled(head: string, body: Uint8Array, sent: number): Promise<{ raw: string; ms: number }> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    let got = "";
    const sock = connect(Number(new URL(svc.origin).port), "127.0.0.1", () => {
      sock.write(head);
      sock.write(body.subarray(0, sent));
    });
    sock.on("data", (d) => {
      got += d.toString();
      if (got.includes("\r\n\r\n") && got.includes("}}")) sock.destroy();
    });
    sock.on("close", () => resolve({ raw: got, ms: Date.now() - t0 }));
    sock.on("error", () => resolve({ raw: got, ms: Date.now() - t0 }));
    setTimeout(() => sock.destroy(), 30_000);
  });
}

describe("a stalled request body", () => {
  test("an upload that stops sending is cut with 408 request_timeout after BODY_STALL_TIMEOUT_S; nothing stored", async () => {
    const mp = multipart([
      { name: "file", filename: "stall.pdf", contentType: "application/pdf", data: minimalPdf(3, "stall") },
    ]);
    const head = `POST /api/v1/files HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: ${mp.contentType}\r\nContent-Length: ${mp.body.length}\r\n\r\n`;
    const { raw, ms } = await stalled(head, mp.body, Math.floor(mp.body.length / 2));
    expect(raw.split("\r\n")[0]).toBe("HTTP/1.1 408 Request Timeout");
    expect(raw).toContain('"code":"request_timeout"');
    expect(raw.toLowerCase()).toContain("x-request-id: req_");
    expect(ms).toBeGreaterThanOrEqual(1500);
    expect(ms).toBeLessThan(12_000);
    const scratch = join(svc.dataDir, "tmp");
    expect(existsSync(scratch) ? readdirSync(scratch) : []).toEqual([]);
    const [{ n }] = (await svc.sql`SELECT count(*)::int AS n FROM files`) as any;
    expect(n).toBe(0);
  });

  test("a JSON body that stops sending is cut with 408 request_timeout after BODY_STALL_TIMEOUT_S; no job created", async () => {
    const body = new TextEncoder().encode(
      JSON.stringify({ operation: "rotate", file_id: "file_x", options: { degrees: 90 } }),
    );
    const head = `POST /api/v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const { raw, ms } = await stalled(head, body, 10);
    expect(raw.split("\r\n")[0]).toBe("HTTP/1.1 408 Request Timeout");
    expect(raw).toContain('"code":"request_timeout"');
    expect(ms).toBeGreaterThanOrEqual(1500);
    expect(ms).toBeLessThan(12_000);
    const [{ n }] = (await svc.sql`SELECT count(*)::int AS n FROM jobs`) as any;
    expect(n).toBe(0);
  });

  test("a body that keeps sending slowly, a byte a second (under the stall limit), is received and answered by its route", async () => {
    const body = new TextEncoder().encode(
      JSON.stringify({ operation: "rotate", file_id: "file_missing", options: { degrees: 90 } }),
    );
    const head = `POST /api/v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
    const raw: string = await new Promise((resolve) => {
      let got = "";
      const sock = connect(Number(new URL(svc.origin).port), "127.0.0.1", async () => {
        sock.write(head);
        sock.write(body.subarray(0, body.length - 3));
        for (let i = body.length - 3; i < body.length; i++) {
          await Bun.sleep(1000);
          sock.write(body.subarray(i, i + 1));
        }
      });
      sock.on("data", (d) => (got += d.toString()));
      sock.on("close", () => resolve(got));
      sock.on("error", () => resolve(got));
      setTimeout(() => sock.destroy(), 30_000);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 \d{3}/);
    expect(raw.split("\r\n")[0]).not.toContain("408");
    expect(raw).not.toContain("request_timeout");
  });
});
