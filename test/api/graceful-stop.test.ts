// SIGTERM drains an API node: an upload still being sent when the service gets SIGTERM is
// received and stored (201), a new connection after it is refused, and the service exits 0.
import { afterAll, expect, test } from "bun:test";
import { startService, type Service } from "../support/service";
import { multipart } from "../support/jobs";
import { minimalPdf } from "../support/pdf";

let svc: Service | undefined;
afterAll(async () => {
  await svc?.stop().catch(() => {});
});

test("SIGTERM to the service lets an upload in flight finish (201, stored) and the service exits 0", async () => {
  svc = await startService({ workers: 0, args: ["--role", "api"] });
  const { key } = await svc.newKey();
  const mp = multipart([
    { name: "file", filename: "drain.pdf", contentType: "application/pdf", data: minimalPdf(2, "drain") },
  ]);
  const half = Math.floor(mp.body.length / 2);
  let sigtermAt = 0;
  const body = new ReadableStream<Uint8Array>({
    async start(c) {
      c.enqueue(mp.body.subarray(0, half));
      await Bun.sleep(500);
      svc!.proc.kill("SIGTERM");
      sigtermAt = Date.now();
      await Bun.sleep(2000);
      c.enqueue(mp.body.subarray(half));
      c.close();
    },
  });
  const res = await fetch(`${svc.baseUrl}/files`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": mp.contentType,
      "content-length": String(mp.body.length),
    },
    body,
    duplex: "half",
  } as RequestInit);
  const json = (await res.json()) as any;
  expect(sigtermAt).toBeGreaterThan(0);
  expect(res.status).toBe(201);
  expect(json.status).toBe("ready");
  const [row] = (await svc.sql`SELECT status FROM files WHERE id = ${json.id}`) as any;
  expect(row.status).toBe("ready");
  expect(await svc.proc.exited).toBe(0);
  await fetch(`${svc.origin}/healthz`).then(
    () => expect.unreachable("the stopped service still accepts connections"),
    () => {},
  );
});
