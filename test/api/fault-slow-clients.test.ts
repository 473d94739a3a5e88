// Slow and idle clients are bounded by timeouts and never starve the others: an upload trickled
// byte by byte is cut off at UPLOAD_TIMEOUT_S with 408 request_timeout and leaves nothing behind;
// 500 connections that send nothing are closed by the server's idle timeout; meanwhile other
// clients are served promptly.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { useService } from "../support/use-service";
import { multipart, postFiles } from "../support/jobs";
import { minimalPdf } from "../support/pdf";

setDefaultTimeout(120_000);

const svc = useService({ env: { UPLOAD_TIMEOUT_S: "4" } });
let key: string;
beforeAll(async () => {
  key = (await svc.newKey()).key;
});

async function timedAccount(): Promise<{ status: number; ms: number }> {
  const t0 = performance.now();
  const r = await fetch(`${svc.baseUrl}/account`, { headers: { authorization: `Bearer ${key}` } });
  await r.text();
  return { status: r.status, ms: performance.now() - t0 };
}

function port(): number {
  return Number(new URL(svc.origin).port);
}

describe("slow and idle clients", () => {
  test("an upload trickled a byte every 200 ms is cut off with 408 request_timeout; nothing stored; others served meanwhile", async () => {
    const mp = multipart([
      { name: "file", filename: "slow.pdf", contentType: "application/pdf", data: minimalPdf(1, "slow") },
    ]);
    const t0 = Date.now();
    const head = `POST /api/v1/files HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: ${mp.contentType}\r\nContent-Length: ${mp.body.length}\r\n\r\n`;
    const answer = new Promise<string>((resolve) => {
      let got = "";
      const sock = connect(port(), "127.0.0.1", () => {
        sock.write(head);
        let i = 0;
        const tick = setInterval(() => {
          if (sock.destroyed || i >= mp.body.length) return clearInterval(tick);
          sock.write(mp.body.subarray(i, i + 1));
          i++;
        }, 200);
        sock.on("close", () => clearInterval(tick));
      });
      sock.on("data", (d) => {
        got += d.toString();
        if (got.includes("\r\n\r\n") && got.includes("}}")) sock.destroy();
      });
      sock.on("close", () => resolve(got));
      sock.on("error", () => resolve(got));
      setTimeout(() => sock.destroy(), 30_000);
    });
    // Other clients are served while the trickle goes on.
    await Bun.sleep(1000);
    for (let i = 0; i < 5; i++) {
      const r = await timedAccount();
      expect(r.status).toBe(200);
      expect(r.ms).toBeLessThan(3000);
    }
    const got = await answer;
    const elapsed = Date.now() - t0;
    expect(got.split("\r\n")[0]).toBe("HTTP/1.1 408 Request Timeout");
    expect(got).toContain('"code":"request_timeout"');
    expect(got.toLowerCase()).toContain("x-request-id: req_");
    expect(elapsed).toBeGreaterThanOrEqual(3500);
    expect(elapsed).toBeLessThan(15_000);
    const scratch = join(svc.dataDir, "tmp");
    expect(existsSync(scratch) ? readdirSync(scratch) : []).toEqual([]);
    const [{ n }] = (await svc.sql`SELECT count(*)::int AS n FROM files`) as any;
    expect(n).toBe(0);
  });

  test("500 connections that send nothing are closed by the idle timeout; others are served meanwhile", async () => {
    const sockets: Socket[] = [];
    let closed = 0;
    await Promise.all(
      Array.from(
        { length: 500 },
        () =>
          new Promise<void>((resolve) => {
            const s = connect(port(), "127.0.0.1", () => resolve());
            s.on("close", () => closed++);
            s.on("error", () => resolve());
            sockets.push(s);
          }),
      ),
    );
    const t0 = Date.now();
    for (let i = 0; i < 5; i++) {
      const r = await timedAccount();
      expect(r.status).toBe(200);
      expect(r.ms).toBeLessThan(3000);
    }
    // A normal upload works while they hang on.
    const mp = multipart([
      { name: "file", filename: "ok.pdf", contentType: "application/pdf", data: minimalPdf(1, "ok") },
    ]);
    expect((await postFiles(svc, key, mp.body, mp.contentType)).status).toBe(201);
    // Bun's idle timeout (10 s) closes them all.
    const deadline = Date.now() + 40_000;
    while (closed < 500 && Date.now() < deadline) await Bun.sleep(250);
    expect(closed).toBe(500);
    expect(Date.now() - t0).toBeLessThan(40_000);
    for (const s of sockets) s.destroy();
    expect((await timedAccount()).status).toBe(200);
  });
});
