// The TypeScript client's object-store calls against the real service backed by Garage (issue 17,
// after issue 13): files.uploadPresigned (POST /files JSON, PUT to the store, complete) gives a
// ready file a rotate job works on, a 503 of the store on the PUT is retried, and
// jobs.resultUrl's presigned GET gives the same bytes as the normal download.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startService, type Service } from "../../../test/support/service";
import { garageAvailable, garageBin, startGarage, type Garage } from "../../../test/support/garage";
import { rotations, tempDir, writeTemp } from "../../../test/support/jobs";
import { Client, type FetchLike } from "../src/index";
import { textPdf } from "./pdf";

if (!garageAvailable)
  console.log(
    `skipping the TypeScript client's presigned tests: no Garage at ${garageBin} (./scripts/setup-test.sh installs it)`,
  );

describe.skipIf(!garageAvailable)("object store through the client (Garage)", () => {
  let garage: Garage;
  let svc: Service;
  let tmp: ReturnType<typeof tempDir>;
  const pdf = textPdf([["PRESIGNED 1"], ["PRESIGNED 2"]]);

  beforeAll(async () => {
    garage = await startGarage();
    svc = await startService({ workers: 1, env: garage.env });
    tmp = tempDir();
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await garage?.stop();
    tmp?.cleanup();
  }, 60_000);

  async function newClient(fetchImpl?: FetchLike) {
    const { key } = await svc.newKey({ mode: "test" });
    return new Client({ apiKey: key, baseUrl: svc.baseUrl, fetch: fetchImpl, retry: { initialDelayMs: 50 } });
  }

  test("uploadPresigned of a path gives a ready file; a rotate job on it turns both pages", async () => {
    const client = await newClient();
    const file = await client.files.uploadPresigned(writeTemp(tmp.dir, "two.pdf", pdf));
    expect(file).toMatchObject({
      object: "file",
      status: "ready",
      type: "pdf",
      page_count: 2,
      filename: "two.pdf",
      size_bytes: pdf.length,
    });
    const { job, result } = await client.jobs.run({ operation: "rotate", file_id: file.id, options: { degrees: 90 } });
    expect(job.status).toBe("succeeded");
    expect(rotations(writeTemp(tmp.dir, "rotated.pdf", result as Uint8Array))).toEqual([90, 90]);
  }, 60_000);

  test("uploadPresigned PUTs exactly upload.headers to the store and retries the PUT after a 503", async () => {
    const puts: Request[] = [];
    const client = await newClient(async (r) => {
      if (r.method !== "PUT") return fetch(r);
      puts.push(r);
      if (puts.length === 1) return new Response("busy", { status: 503, headers: { "retry-after": "0" } });
      return fetch(r);
    });
    const file = await client.files.uploadPresigned(new Blob([pdf], { type: "application/pdf" }), {
      filename: "blob.pdf",
    });
    expect(file).toMatchObject({
      status: "ready",
      page_count: 2,
      filename: "blob.pdf",
      content_type: "application/pdf",
    });
    expect(puts.length).toBe(2);
    expect(puts[1]!.url.startsWith(garage.endpoint)).toBe(true);
    expect(puts[1]!.headers.get("authorization")).toBeNull(); // the API key never goes to the store
  }, 60_000);

  test("resultUrl gives a presigned URL, valid at most 15 minutes, whose bytes equal the normal download", async () => {
    const client = await newClient();
    const file = await client.files.upload(new Blob([pdf]), "in.pdf");
    const { job, result } = await client.jobs.run({ operation: "rotate", file_id: file.id, options: { degrees: 180 } });
    const link = await client.jobs.resultUrl(job.id);
    expect(link).toMatchObject({
      object: "job_result_url",
      job_id: job.id,
      content_type: "application/pdf",
      bytes: (result as Uint8Array).length,
    });
    expect(link.url.startsWith(garage.endpoint)).toBe(true);
    const ttl = Date.parse(link.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(15 * 60_000);
    const res = await fetch(link.url);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(result as Uint8Array)).toBe(true);
  }, 60_000);
});
