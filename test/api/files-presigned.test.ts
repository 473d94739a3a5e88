// The API spec (docs/api.md) Files (presigned upload, POST /files/{file_id}/complete, 409 file_not_ready) and Jobs
// (format=url) against a real S3-compatible store (Garage, started here); issue 13 points 1-4
// and "bad input and faults": size/type mismatch delete the object, a tampered or expired URL is
// refused by the store, a never-completed upload expires, an unreachable store answers 503.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { client, expectEnvelope, freePort, startService, type Service } from "../support/service";
import { garageAvailable, garageBin, startGarage, type Garage } from "../support/garage";
import { createJob, download, finishedJob, uploadBytes } from "../support/jobs";
import { pngHeader, tinyPdf } from "../support/pdf";

if (!garageAvailable)
  console.log(`skipping presigned-upload tests: no Garage at ${garageBin} (./scripts/setup-test.sh installs it)`);

describe.skipIf(!garageAvailable)("object store (Garage)", () => {
  let garage: Garage;
  let svc: Service;
  let s3: Bun.S3Client;

  beforeAll(async () => {
    garage = await startGarage();
    s3 = garage.s3;
    svc = await startService({ env: { ...garage.env, SWEEP_INTERVAL_S: "1", MAX_UPLOAD_BYTES: "1000000" } });
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await garage?.stop();
  }, 60_000);

  async function presign(key: string, body: Record<string, unknown>) {
    return client(svc.baseUrl, key)("POST", "/files", body);
  }
  async function storageKey(fileId: string): Promise<string> {
    const [row] = await svc.sql`SELECT storage_key FROM files WHERE id = ${fileId}`;
    return row!.storage_key;
  }
  async function putTo(upload: { url: string; headers: Record<string, string> }, bytes: Uint8Array) {
    return fetch(upload.url, { method: "PUT", headers: upload.headers, body: bytes });
  }

  test("presigned upload: pending file + PUT URL; a job before complete is 409 file_not_ready; complete makes it ready with its page count; twice is harmless", async () => {
    const { key } = await svc.newKey();
    const call = client(svc.baseUrl, key);
    const pdf = tinyPdf(3);
    const r = await presign(key, { filename: "three.pdf", content_type: "application/pdf", size_bytes: pdf.length });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({
      object: "file",
      status: "pending_upload",
      filename: "three.pdf",
      size_bytes: pdf.length,
      page_count: null,
    });
    expect(r.json.upload.method).toBe("PUT");
    expect(r.json.upload.url.startsWith(garage.endpoint)).toBe(true);
    const ttl = Date.parse(r.json.upload.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(50 * 60_000);
    expect(ttl).toBeLessThanOrEqual(3600_000);
    const id = r.json.id;

    expectEnvelope(await call("POST", `/files/${id}/complete`), 409, "file_not_ready"); // nothing PUT yet
    expect((await putTo(r.json.upload, pdf)).status).toBe(200);
    const early = await call("POST", "/jobs", { operation: "rotate", file_id: id, options: { degrees: 90 } });
    expectEnvelope(early, 409, "file_not_ready");
    expect((await call("GET", `/files/${id}`)).json.status).toBe("pending_upload");

    const done = await call("POST", `/files/${id}/complete`);
    expect(done.status).toBe(200);
    expect(done.json).toMatchObject({ id, status: "ready", page_count: 3, type: "pdf", size_bytes: pdf.length });
    const again = await call("POST", `/files/${id}/complete`);
    expect(again.status).toBe(200);
    expect(again.json).toEqual(done.json);

    const job = await createJob(svc, key, { operation: "rotate", file_id: id, options: { degrees: 90 } });
    const fin = await finishedJob(svc, key, job.id);
    expect(fin.status).toBe("succeeded");
    expect(fin.result.pages_processed).toBe(3);
  }, 60_000);

  test("format=url: a presigned GET of the result with the download filename; the bytes equal format=download; a tampered signature and an expired URL are refused by the store", async () => {
    const { key } = await svc.newKey();
    const up = await uploadBytes(svc, key, tinyPdf(2), "two.pdf", "application/pdf");
    expect(up.status).toBe(201);
    // The multipart upload went to the bucket, not to this host's disk.
    const k = await storageKey(up.json.id);
    expect(await s3.file(k).exists()).toBe(true);
    expect(existsSync(join(svc.dataDir, "blobs"))).toBe(false);

    const job = await createJob(svc, key, { operation: "rotate", file_id: up.json.id, options: { degrees: 180 } });
    expect((await finishedJob(svc, key, job.id)).status).toBe("succeeded");
    const direct = await download(svc, key, job.id);
    expect(direct.status).toBe(200);

    const r = await client(svc.baseUrl, key)("GET", `/jobs/${job.id}/result?format=url`);
    expect(r.status).toBe(200);
    expect(r.json.object).toBe("job_result_url");
    const life = Date.parse(r.json.expires_at) - Date.now();
    expect(life).toBeGreaterThan(14 * 60_000);
    expect(life).toBeLessThanOrEqual(15 * 60_000);
    const got = await fetch(r.json.url);
    expect(got.status).toBe(200);
    expect(got.headers.get("content-disposition")).toContain(`filename="${r.json.filename}"`);
    expect(Buffer.from(await got.arrayBuffer()).equals(Buffer.from(direct.bytes))).toBe(true);

    const sig = /X-Amz-Signature=([0-9a-f]+)/.exec(r.json.url)![1]!;
    const flipped = sig.slice(0, -1) + (sig.endsWith("0") ? "1" : "0");
    expect((await fetch(r.json.url.replace(sig, flipped))).status).toBe(403);

    // An expired link: the result's own expiry caps the URL's lifetime, so bring it near.
    await svc.sql`UPDATE jobs SET result_expires_at = now() + interval '2 seconds' WHERE id = ${job.id}`;
    const short = await client(svc.baseUrl, key)("GET", `/jobs/${job.id}/result?format=url`);
    expect(short.status).toBe(200);
    expect(Date.parse(short.json.expires_at) - Date.now()).toBeLessThanOrEqual(2000);
    await Bun.sleep(3500);
    const late = await fetch(short.json.url);
    expect(late.status).toBeGreaterThanOrEqual(400);
    expect(late.status).toBeLessThan(500);
  }, 60_000);

  test("complete refuses an object whose size differs from size_bytes (400 upload_size_mismatch) and deletes the object and the file", async () => {
    const { key } = await svc.newKey();
    const pdf = tinyPdf(1);
    const r = await presign(key, { filename: "a.pdf", content_type: "application/pdf", size_bytes: pdf.length - 10 });
    expect((await putTo(r.json.upload, pdf)).status).toBe(200);
    const k = await storageKey(r.json.id);
    expectEnvelope(await client(svc.baseUrl, key)("POST", `/files/${r.json.id}/complete`), 400, "upload_size_mismatch");
    expect(await s3.file(k).exists()).toBe(false);
    expectEnvelope(await client(svc.baseUrl, key)("GET", `/files/${r.json.id}`), 404, "not_found");
  }, 30_000);

  test("complete refuses bytes of another type than declared (415 unsupported_file_type) and deletes the object", async () => {
    const { key } = await svc.newKey();
    const png = pngHeader();
    const r = await presign(key, { filename: "a.pdf", content_type: "application/pdf", size_bytes: png.length });
    expect((await putTo(r.json.upload, png)).status).toBe(200);
    const k = await storageKey(r.json.id);
    expectEnvelope(
      await client(svc.baseUrl, key)("POST", `/files/${r.json.id}/complete`),
      415,
      "unsupported_file_type",
    );
    expect(await s3.file(k).exists()).toBe(false);
    expectEnvelope(await client(svc.baseUrl, key)("POST", `/files/${r.json.id}/complete`), 404, "not_found");
  }, 30_000);

  test("size_bytes over the upload limit answers 413 file_too_large before any URL is issued", async () => {
    const { key } = await svc.newKey();
    const r = await presign(key, { filename: "big.pdf", content_type: "application/pdf", size_bytes: 1_000_001 });
    expectEnvelope(r, 413, "file_too_large");
    expect(r.json.error.param).toBe("size_bytes");
    const [{ n }] = (await svc.sql`SELECT count(*)::int AS n FROM files WHERE filename = 'big.pdf'`) as any;
    expect(n).toBe(0);
  }, 30_000);

  test("an upload never completed expires like any file: the sweeper marks it expired and deletes its object", async () => {
    const { key } = await svc.newKey();
    const pdf = tinyPdf(1);
    const r = await presign(key, { filename: "late.pdf", content_type: "application/pdf", size_bytes: pdf.length });
    expect((await putTo(r.json.upload, pdf)).status).toBe(200);
    const k = await storageKey(r.json.id);
    await svc.sql`UPDATE files SET expires_at = now() - interval '1 second' WHERE id = ${r.json.id}`;
    const deadline = Date.now() + 20_000;
    for (;;) {
      const [row] = await svc.sql`SELECT status FROM files WHERE id = ${r.json.id}`;
      if (row!.status === "expired" && !(await s3.file(k).exists())) break;
      if (Date.now() > deadline) throw new Error(`not swept: ${row!.status}`);
      await Bun.sleep(250);
    }
    expectEnvelope(await client(svc.baseUrl, key)("POST", `/files/${r.json.id}/complete`), 404, "not_found");
  }, 30_000);

  test("a presigned PUT URL past its expiry is refused by the store", async () => {
    const url = s3.file("files/zz/expired-probe").presign({ method: "PUT", expiresIn: 1 });
    await Bun.sleep(2500);
    const r = await fetch(url, { method: "PUT", body: "x" });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(await s3.file("files/zz/expired-probe").exists()).toBe(false);
  }, 15_000);

  test("the store unreachable: a multipart upload answers 503 store_unavailable in the envelope (safe to retry); no file is created and no scratch copy is left; a job whose input cannot be read fails with store_unavailable", async () => {
    // STORE_RETRY_S=1: a worker tries the unreachable store again for 1 s (not the default 30) before the job fails.
    const dead = await startService({
      env: { ...garage.env, S3_ENDPOINT: `http://127.0.0.1:${await freePort()}`, STORE_RETRY_S: "1" },
    });
    try {
      const { key, accountId } = await dead.newKey();
      const up = await uploadBytes(dead, key, tinyPdf(1), "a.pdf", "application/pdf");
      expectEnvelope(up, 503, "store_unavailable");
      const [{ n }] = (await dead.sql`SELECT count(*)::int AS n FROM files`) as any;
      expect(n).toBe(0);
      const scratch = join(dead.dataDir, "tmp");
      expect(existsSync(scratch) ? readdirSync(scratch).filter((n) => n.startsWith("upload-")) : []).toEqual([]);
      // A job whose input cannot be read from the store fails with the documented code.
      const id = crypto.randomUUID();
      await dead.sql`INSERT INTO files (id, account_id, mode, filename, content_type, kind, size_bytes, page_count, status, storage_key, expires_at)
                     VALUES (${id}, ${accountId}, 'test', 'a.pdf', 'application/pdf', 'pdf', 10, 1, 'ready', ${"files/" + id.slice(0, 2) + "/" + id}, now() + interval '1 day')`;
      const job = await createJob(dead, key, { operation: "rotate", file_id: id, options: { degrees: 90 } });
      const failed = await finishedJob(dead, key, job.id, 30_000);
      expect(failed.status).toBe("failed");
      expect(failed.error.code).toBe("store_unavailable");
    } finally {
      await dead.stop();
    }
  }, 60_000);
});
