// Large documents (docs/scaling.md, "Large documents"), at a size CI can afford: a generated
// 500-page scanned PDF of about 220 MB (crates/engine/examples/large_pdf.rs, every page its own
// 300-dpi JPEG) through a service on an object store (Garage) whose MAX_UPLOAD_BYTES an operator
// raised. Rules: the upload streams into the store (the API's peak resident memory grows by far
// less than the file, multipart and presigned alike); the page count is read at upload; the
// mode's page limit refuses the job until the admin CLI raises the account's, and then the job
// runs. The 5,000-page, 2 GB figures come from `bun run bench large`.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { limits } from "../../src/domain/pricing";
import { childPids, largePdf, memOf, resetPeak, streamUpload } from "../../scripts/bench/large-lib";
import { garageAvailable, garageBin, startGarage, type Garage } from "../support/garage";
import { createJob, finishedJob, rolePids } from "../support/jobs";
import { client, expectEnvelope, startService, type Service } from "../support/service";

setDefaultTimeout(300_000);

const pages = 500;
const cargo = Bun.which("cargo") !== null;
const ready = garageAvailable && cargo;
if (!garageAvailable) console.log(`skipping large-document tests: no Garage at ${garageBin}`);
else if (!cargo) console.log("skipping large-document tests: no cargo to build the PDF generator");

/** Growth of the API's peak over its idle size that a streamed upload may cause, whatever the
 * file's size: the parts Bun's S3 client buffers for its multipart upload (about 100 MB, the
 * same for 1 and 2 GB) and the parser's chunks awaiting collection. Holding the file would
 * take more than the file (about 220 MB). */
const apiGrowthMb = 150;

describe.skipIf(!ready)("a large document", () => {
  let garage: Garage;
  let svc: Service;
  let dir: string;
  let pdf: string;
  let size: number;
  let key: string;
  let accountId: string;
  let fileId: string;
  let apiPid: number;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "docproc-large-"));
    pdf = largePdf(dir, pages);
    size = statSync(pdf).size;
    garage = await startGarage();
    svc = await startService({ env: { ...garage.env, MAX_UPLOAD_BYTES: String(512 * 1024 * 1024) } });
    ({ key, accountId } = await svc.newKey({ mode: "test" }));
    [apiPid] = (await rolePids(svc, "api")) as [number];
  }, 600_000);
  afterAll(async () => {
    await svc?.stop();
    await garage?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  test("the generated document is larger than the default upload limit, so the test is about size", () => {
    expect(size).toBeGreaterThan(100 * 1024 * 1024);
    expect(size / 1048576).toBeGreaterThan(apiGrowthMb + 50);
  });

  test("a multipart upload streams into the object store: the API's peak grows by far less than the file, and the pages are counted", async () => {
    await Bun.sleep(500);
    const idle = memOf(apiPid).rssMb;
    resetPeak(apiPid);
    const up = await streamUpload(svc.baseUrl, key, pdf, "large.pdf");
    const peak = memOf(apiPid).hwmMb;
    expect(up.status).toBe(201);
    expect(up.json).toMatchObject({ status: "ready", page_count: pages, size_bytes: size });
    fileId = up.json.id;
    console.log(JSON.stringify({ multipart: { fileMb: size / 1048576, idleMb: idle, peakMb: peak } }));
    expect(peak - idle).toBeLessThan(apiGrowthMb);
    const stored = await garage.s3
      .file((await svc.sql`SELECT storage_key FROM files WHERE id = ${fileId}`)[0]!.storage_key)
      .stat();
    expect(stored.size).toBe(size);
  });

  test("a presigned upload's complete copies and identifies the stored object with the API's peak growing by far less than the file", async () => {
    const call = client(svc.baseUrl, key);
    const pre = await call("POST", "/files", {
      filename: "large.pdf",
      content_type: "application/pdf",
      size_bytes: size,
    });
    expect(pre.status).toBe(201);
    const put = await fetch(pre.json.upload.url, { method: "PUT", body: Bun.file(pdf) });
    expect(put.ok).toBe(true);
    const idle = memOf(apiPid).rssMb;
    resetPeak(apiPid);
    const [inspector] = await childPids(apiPid, "roles/inspector.ts");
    if (inspector) resetPeak(inspector);
    const done = await call("POST", `/files/${pre.json.id}/complete`);
    const peak = memOf(apiPid).hwmMb;
    expect(done.status).toBe(200);
    expect(done.json).toMatchObject({ status: "ready", page_count: pages });
    console.log(
      JSON.stringify({
        complete: { idleMb: idle, peakMb: peak, inspectorPeakMb: inspector && memOf(inspector).hwmMb },
      }),
    );
    expect(peak - idle).toBeLessThan(apiGrowthMb);
    // The inspector counts pages from the cross-reference table, without reading the images.
    if (inspector) expect(memOf(inspector).hwmMb).toBeLessThan(size / 1048576);
  });

  test("the mode's page limit refuses the job until the admin CLI raises the account's, and GET /account shows the limit in force", async () => {
    expect(fileId).toBeDefined();
    const call = client(svc.baseUrl, key);
    expect(pages).toBeGreaterThan(limits.test.pages_per_job);
    const refused = await call("POST", "/jobs", { operation: "rotate", file_id: fileId, options: { degrees: 90 } });
    expectEnvelope(refused, 422, "page_limit_exceeded");
    expect((await call("GET", "/account")).json.limits.pages_per_job).toBe(limits.test.pages_per_job);

    const set = await svc.admin("account:set", "--account", accountId, "--pages-per-job", String(pages));
    expect(set).toMatchObject({ id: accountId, pages_per_job: pages });
    expect((await call("GET", "/account")).json.limits.pages_per_job).toBe(pages);

    const job = await createJob(svc, key, { operation: "rotate", file_id: fileId, options: { degrees: 90 } });
    const done = await finishedJob(svc, key, job.id, 600_000);
    expect(done.status).toBe("succeeded");
    expect(done.progress.pages_total).toBe(pages);

    // `default` gives the account the mode's limit again.
    expect(await svc.admin("account:set", "--account", accountId, "--pages-per-job", "default")).toMatchObject({
      pages_per_job: null,
    });
    expectEnvelope(
      await call("POST", "/jobs", { operation: "rotate", file_id: fileId, options: { degrees: 90 } }),
      422,
      "page_limit_exceeded",
    );
  });
});
