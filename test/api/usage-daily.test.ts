// GET /usage/daily (extension): credits charged and pages processed per UTC day and operation
// in the current period, per mode; marked x-extension in the OpenAPI document.
import { describe, expect, test } from "bun:test";
import { client, expectEnvelope } from "../support/service";
import { useService } from "../support/use-service";
import { createJob, finishedJob, uploadBytes } from "../support/jobs";
import { makePdf } from "../support/make-pdf";

const svc = useService({ workers: 1 }, 60_000);

const today = () => new Date().toISOString().slice(0, 10);

async function runJob(key: string, operation: string, options: object) {
  const up = await uploadBytes(svc, key, makePdf(2), "two.pdf", "application/pdf");
  expect(up.status).toBe(201);
  const job = await createJob(svc, key, { operation, file_id: up.json.id, options });
  const done = await finishedJob(svc, key, job.id, 60_000);
  expect(done.status).toBe("succeeded");
  return done;
}

describe("GET /usage/daily", () => {
  test("live: a billed job's charged credits and processed pages appear under today and its operation", async () => {
    const { key } = await svc.newKey({ mode: "live" });
    const done = await runJob(key, "compress", { level: "light" });
    const r = await client(svc.baseUrl, key)("GET", "/usage/daily");
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ object: "usage_daily", livemode: true, billed: true });
    expect(r.json.data).toEqual([
      {
        date: today(),
        operation: "compress",
        credits: done.result.pages_processed,
        pages: done.result.pages_processed,
        jobs: 1,
      },
    ]);
  }, 90_000);

  test("sandbox: pages and jobs are counted, credits stay 0 (sandbox is never billed)", async () => {
    const { key } = await svc.newKey({ mode: "test" });
    await runJob(key, "rotate", { degrees: 90 });
    const r = await client(svc.baseUrl, key)("GET", "/usage/daily");
    expect(r.json).toMatchObject({ livemode: false, billed: false });
    expect(r.json.data).toEqual([{ date: today(), operation: "rotate", credits: 0, pages: 2, jobs: 1 }]);
  }, 90_000);

  test("needs the usage:read scope and is marked as an extension in the OpenAPI document", async () => {
    const k = await svc.newKey({ mode: "test", scopes: ["jobs:read"] });
    expect(
      expectEnvelope(await client(svc.baseUrl, k.key)("GET", "/usage/daily"), 403, "insufficient_scope").param,
    ).toBe("usage:read");
    const doc = (await client(svc.baseUrl)("GET", "/openapi.json")).json;
    expect(doc.paths["/usage/daily"].get["x-extension"]).toBe(true);
    expect(doc.paths["/usage"].get["x-extension"]).toBeUndefined();
  });
});
