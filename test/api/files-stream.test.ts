// Issue 3, point 1: "Uploads stream to disk: a 500 MB upload must not hold 500 MB in memory."
// A ~500 MB multipart body (a PDF header, then junk) is generated as a stream, so it never
// exists in memory on the client either, and sent to an API started with a MAX_UPLOAD_BYTES
// above it. The API process's peak resident set (VmHWM) must stay far below the upload size.
// The junk is not a PDF, so the answer may be a refusal (415/422) once the bytes are inspected;
// only 413 and 5xx would be wrong.
//
// It takes about a second here, so it runs by default (STRESS=0 skips it); STREAM_UPLOAD_MB
// changes the size (e.g. 1500 to show the peak does not grow with the upload).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startService, type Service } from "../support/service";
import { rolePids } from "../support/jobs";

const uploadBytes = Number(process.env.STREAM_UPLOAD_MB || 500) * 1024 * 1024;
const skip = process.env.STRESS === "0";
let svc: Service;

function kb(status: string, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status);
  return m ? Number(m[1]) : NaN;
}

function memOf(pid: number): { rssMb: number; hwmMb: number } {
  const s = readFileSync(`/proc/${pid}/status`, "utf8");
  return { rssMb: kb(s, "VmRSS") / 1024, hwmMb: kb(s, "VmHWM") / 1024 };
}

beforeAll(async () => {
  if (skip) return;
  svc = await startService({ workers: 0, env: { MAX_UPLOAD_BYTES: String(uploadBytes + 64 * 1024 * 1024) } });
}, 60_000);
afterAll(async () => {
  await svc?.stop();
}, 60_000);

describe("streaming upload", () => {
  test.skipIf(skip)(
    "a ~500 MB upload completes while the API process's memory stays bounded",
    async () => {
      const [apiPid] = await rolePids(svc, "api");
      expect(apiPid).toBeGreaterThan(0);
      const before = memOf(apiPid!);
      const clientBefore = process.memoryUsage().rss / 1024 / 1024;

      const boundary = "stream-boundary-7f3a";
      const enc = new TextEncoder();
      const head = enc.encode(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.7\n`,
      );
      const tail = enc.encode(`\r\n--${boundary}--\r\n`);
      // One 1 MiB chunk of printable junk (never a CR/LF, so never a boundary), sent 500 times.
      const chunk = new Uint8Array(1024 * 1024);
      for (let i = 0; i < chunk.length; i++) chunk[i] = 0x41 + ((i * 7919) % 26);
      let sent = 0;
      let headSent = false;
      const body = new ReadableStream<Uint8Array>({
        pull(c) {
          if (!headSent) {
            headSent = true;
            c.enqueue(head);
            return;
          }
          if (sent >= uploadBytes) {
            c.enqueue(tail);
            c.close();
            return;
          }
          c.enqueue(chunk);
          sent += chunk.length;
        },
      });

      let peakRss = 0;
      let peakClient = 0;
      const sampler = setInterval(() => {
        try {
          peakRss = Math.max(peakRss, memOf(apiPid!).rssMb);
        } catch {}
        peakClient = Math.max(peakClient, process.memoryUsage().rss / 1024 / 1024);
      }, 100);
      const started = Date.now();
      let res: Response;
      try {
        res = await fetch(`${svc.baseUrl}/files`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${(await svc.newKey()).key}`,
            "content-type": `multipart/form-data; boundary=${boundary}`,
          },
          body,
          duplex: "half",
        });
      } finally {
        clearInterval(sampler);
      }
      const seconds = (Date.now() - started) / 1000;
      const text = await res.text();
      const after = memOf(apiPid!);
      console.log(
        JSON.stringify({
          status: res.status,
          body: text.slice(0, 200),
          seconds,
          sentMb: sent / 1048576,
          api: { before, after, peakRssMb: Math.round(peakRss) },
          clientPeakRssMb: Math.round(peakClient),
          clientBeforeMb: Math.round(clientBefore),
        }),
      );

      expect(sent).toBe(uploadBytes);
      expect([201, 415, 422]).toContain(res.status);
      // Far below the 500 MB that went through. (Measured here: the peak grows by 70-110 MB —
      // garbage from the parser's per-chunk buffers awaiting GC — the same for 100 MB or 1.5 GB.)
      expect(after.hwmMb - before.hwmMb).toBeLessThan(150);
      expect(after.hwmMb).toBeLessThan(250);
      // The client streamed too.
      expect(peakClient - clientBefore).toBeLessThan(200);
      if (res.status === 201) {
        const f = JSON.parse(text);
        expect(f.size_bytes).toBe(uploadBytes + 9);
      }
      // No scratch file is left behind.
      const scratch = join(svc.dataDir, "tmp");
      expect(existsSync(scratch) ? readdirSync(scratch).filter((n) => n.startsWith("upload-")) : []).toEqual([]);
    },
    180_000,
  );
});
