// The sweeper's orphan check: blobs no live row references (upload blobs without a file row,
// results of a losing attempt or of a deleted file row) and scratch files of dead processes are
// removed once older than ORPHAN_GRACE_S; referenced blobs and young orphans are kept.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { randomUUID } from "node:crypto";
import { useService } from "../support/use-service";
import { createJob, multipart, postFiles, waitJobRow } from "../support/jobs";
import { minimalPdf } from "../support/pdf";
import { waitFor } from "../support/wait";

setDefaultTimeout(90_000);

const svc = useService({ env: { SWEEP_INTERVAL_S: "1", ORPHAN_CHECK_INTERVAL_S: "1", ORPHAN_GRACE_S: "600" } });

function plant(rel: string, ageS: number): string {
  const p = join(svc.dataDir, rel);
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, "orphan");
  const t = new Date(Date.now() - ageS * 1000);
  utimesSync(p, t, t);
  return p;
}

describe("orphan check", () => {
  test("unreferenced blobs and stale scratch older than the grace period are removed; live and young ones are kept", async () => {
    const { key } = await svc.newKey();
    const mp = multipart([
      { name: "file", filename: "a.pdf", contentType: "application/pdf", data: minimalPdf(2, "orphans") },
    ]);
    const up = await postFiles(svc, key, mp.body, mp.contentType);
    expect(up.status).toBe(201);
    const job = await createJob(svc, key, { operation: "rotate", file_id: up.json.id, options: { degrees: 90 } });
    const row = await waitJobRow(svc, job.id, ["succeeded"]);
    const [file] = await svc.sql`SELECT storage_key FROM files WHERE id = ${up.json.id}`;
    const liveUpload = join(svc.dataDir, "blobs", file!.storage_key);
    const liveResult = join(svc.dataDir, "blobs", row.result.storage_key);
    // Make the live blobs old too: age alone must never remove a referenced blob.
    const old = new Date(Date.now() - 7200_000);
    utimesSync(liveUpload, old, old);
    utimesSync(liveResult, old, old);

    const noRow = randomUUID();
    const deleted = randomUUID();
    await svc.sql`INSERT INTO files (id, account_id, mode, filename, content_type, kind, size_bytes, page_count, status, storage_key, expires_at)
                  SELECT ${deleted}, account_id, mode, 'd.pdf', 'application/pdf', 'pdf', 6, 1, 'deleted', ${`files/${deleted.slice(0, 2)}/${deleted}`}, now() FROM files WHERE id = ${up.json.id}`;
    const orphans = [
      plant(`blobs/files/${noRow.slice(0, 2)}/${noRow}`, 3600), // upload blob whose row was never written
      plant(`blobs/files/${deleted.slice(0, 2)}/${deleted}`, 3600), // blob of a deleted file (crash mid-delete)
      plant(`blobs/results/${job.id.slice(0, 2)}/${job.id}/7/lost-attempt.pdf`, 3600), // a losing attempt's output
      plant(`blobs/results/aa/${randomUUID()}/1/x.pdf`, 3600), // a job that no longer exists
      plant(`tmp/upload-${randomUUID()}`, 3600), // scratch of a killed API process
      plant(`tmp/job-${randomUUID()}-1/page.bin`, 3600),
    ];
    // The job- scratch directory itself must be old as well.
    const jobScratch = dirname(orphans[5]!);
    utimesSync(jobScratch, new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000));
    const young = plant(`blobs/files/ff/${randomUUID()}`, 5); // within the grace period: maybe still being written

    await waitFor("orphans removed", async () => orphans.every((p) => !existsSync(p)) || undefined, 30_000, 200);
    expect(existsSync(liveUpload)).toBe(true);
    expect(existsSync(liveResult)).toBe(true);
    expect(existsSync(young)).toBe(true);
    expect(existsSync(jobScratch)).toBe(false);
    // The result still downloads.
    const r = await fetch(`${svc.baseUrl}/jobs/${job.id}/result`, { headers: { authorization: `Bearer ${key}` } });
    expect(r.status).toBe(200);
  });
});
