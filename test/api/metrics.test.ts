// Issue 13, point 6: GET /metrics in Prometheus text format, outside /api/v1, behind
// METRICS_TOKEN when set: queue depth per operation, jobs started/finished/failed, duration and
// queue-wait histograms per operation, webhook deliveries by outcome, blob store errors.
import { describe, expect, test } from "bun:test";
import { useService } from "../support/use-service";
import { createJob, finishedJob, uploadBytes, waitJobRow } from "../support/jobs";
import { tinyPdf } from "../support/pdf";

const token = "metrics-test-token";
const svc = useService({ env: { METRICS_TOKEN: token, JOB_TEST_PAGE_DELAY_MS: "1500" } }, 60_000);

async function scrape(): Promise<string> {
  const r = await fetch(`${svc.origin}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toContain("text/plain");
  return r.text();
}
function value(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(series + " "));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("GET /metrics", () => {
  test("needs the METRICS_TOKEN bearer token when one is set (401 without it or with a wrong one)", async () => {
    expect((await fetch(`${svc.origin}/metrics`)).status).toBe(401);
    expect((await fetch(`${svc.origin}/metrics`, { headers: { authorization: "Bearer nope" } })).status).toBe(401);
    expect((await fetch(`${svc.baseUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(404);
  });

  test("queue depth counts queued jobs per operation; finished jobs feed the counters and both histograms", async () => {
    const before = await scrape();
    for (const op of ["rotate", "merge", "ocr", "convert"])
      expect(value(before, `docproc_queue_depth{operation="${op}"}`)).toBe(0);
    expect(value(before, "docproc_blob_store_errors_total")).toBe(0);

    const { key } = await svc.newKey();
    const f = (await uploadBytes(svc, key, tinyPdf(1), "one.pdf", "application/pdf")).json;
    const a = await createJob(svc, key, { operation: "rotate", file_id: f.id, options: { degrees: 90 } });
    await waitJobRow(svc, a.id, ["running"]);
    const b = await createJob(svc, key, { operation: "rotate", file_id: f.id, options: { degrees: 180 } });
    const during = await scrape();
    expect(value(during, 'docproc_queue_depth{operation="rotate"}')).toBe(1);
    expect(value(during, 'docproc_jobs_running{operation="rotate"}')).toBe(1);

    expect((await finishedJob(svc, key, a.id)).status).toBe("succeeded");
    expect((await finishedJob(svc, key, b.id)).status).toBe("succeeded");
    const after = await scrape();
    expect(value(after, 'docproc_queue_depth{operation="rotate"}')).toBe(0);
    expect(value(after, 'docproc_jobs_started_total{operation="rotate"}')).toBe(2);
    expect(value(after, 'docproc_jobs_finished_total{operation="rotate",status="succeeded"}')).toBe(2);
    expect(value(after, 'docproc_job_duration_seconds_count{operation="rotate"}')).toBe(2);
    // Each job waited 1.5 s per page in the worker: both durations are at least 1 s.
    expect(value(after, 'docproc_job_duration_seconds_bucket{operation="rotate",le="1"}')).toBe(0);
    expect(value(after, 'docproc_job_duration_seconds_bucket{operation="rotate",le="+Inf"}')).toBe(2);
    expect(value(after, 'docproc_job_duration_seconds_sum{operation="rotate"}')).toBeGreaterThanOrEqual(3);
    // The second job waited behind the first: one queue wait of at least 1 s.
    expect(value(after, 'docproc_job_queue_wait_seconds_count{operation="rotate"}')).toBe(2);
    expect(value(after, 'docproc_job_queue_wait_seconds_bucket{operation="rotate",le="1"}')).toBeLessThanOrEqual(1);
    const buckets = after
      .split("\n")
      .filter((l) => l.startsWith('docproc_job_duration_seconds_bucket{operation="rotate"'))
      .map((l) => Number(l.split(" ")[1]));
    expect(buckets).toEqual([...buckets].sort((x, y) => x - y)); // cumulative
    expect(after).toContain("# TYPE docproc_job_duration_seconds histogram");
    expect(after).toContain("# TYPE docproc_webhook_deliveries gauge");
  }, 60_000);
});
