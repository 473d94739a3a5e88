// Issue 3, point 3: a per-job wall-clock limit (JOB_TIMEOUT_S, documented and configurable)
// kills a stuck job's worker and fails the job with the documented job_timeout code; the
// supervisor starts a fresh worker, which takes the next job.
import { describe, expect, test } from "bun:test";
import { client, hasCorpus } from "../support/service";
import { useService } from "../support/use-service";
import { waitFor, isAlive } from "../support/wait";
import { createJob, eventsFor, finishedJob, rolePids, uploadOk, waitJobRow, workerPidOf } from "../support/jobs";

// 1 s of test delay per page: a 4-page job needs > 4 s, over the 2 s limit; a 1-page job fits.
const svc = useService({ workers: 1, env: { JOB_TIMEOUT_S: "2", JOB_TEST_PAGE_DELAY_MS: "1000" } }, 60_000);

describe("per-job wall-clock limit", () => {
  test.skipIf(!hasCorpus)(
    "a job over JOB_TIMEOUT_S fails with job_timeout, its worker is replaced, and the next job runs",
    async () => {
      const { key } = await svc.newKey();
      const slow = await uploadOk(svc, key, "latex-outline-4-pages.pdf");
      const quick = await uploadOk(svc, key, "scanned-huckfinn-page.pdf");
      const job = await createJob(svc, key, { operation: "rotate", file_id: slow.id, options: { degrees: 90 } });
      const running = await waitJobRow(svc, job.id, ["running"], 10_000);
      const pid = workerPidOf(running.worker_id);
      expect(await rolePids(svc, "worker")).toEqual([pid]);

      const done = await finishedJob(svc, key, job.id, 15_000);
      expect(done.status).toBe("failed");
      expect(done.error.code).toBe("job_timeout");
      expect(done.error.message).toContain("2 s");
      expect(done.attempts).toBe(1);
      expect(Date.parse(done.finished_at) - Date.parse(done.started_at)).toBeGreaterThanOrEqual(1_900);
      expect(Date.parse(done.finished_at) - Date.parse(done.started_at)).toBeLessThan(4_000);
      const ev = await eventsFor(svc, job.id);
      expect(ev.map((e) => e.type)).toEqual(["job.failed"]);
      expect(ev[0].payload.data.object.error.code).toBe("job_timeout");

      // The stuck worker process is gone, and the supervisor started another.
      await waitFor("the timed-out worker to exit", () => !isAlive(pid), 10_000);
      const replacement = await waitFor(
        "a replacement worker",
        async () => {
          const pids = await rolePids(svc, "worker");
          return pids.length === 1 && pids[0] !== pid ? pids[0] : undefined;
        },
        10_000,
      );
      expect(svc.logs()).toContain("wall-clock");

      const next = await createJob(svc, key, { operation: "rotate", file_id: quick.id, options: { degrees: 90 } });
      const ok = await finishedJob(svc, key, next.id, 15_000);
      expect(ok.status).toBe("succeeded");
      const [row] = await svc.sql`SELECT worker_id FROM jobs WHERE id = ${next.id}`;
      expect(workerPidOf(row!.worker_id)).toBe(replacement);

      // The failed job is not picked up again later.
      await Bun.sleep(1_000);
      expect((await client(svc.baseUrl, key)("GET", `/jobs/${job.id}`)).json).toMatchObject({
        status: "failed",
        attempts: 1,
      });
    },
    60_000,
  );

  test("job_timeout is a documented job-failure code in GET /errors", async () => {
    const r = await client(svc.baseUrl)("GET", "/errors");
    expect(r.status).toBe(200);
    expect(JSON.stringify(r.json)).toContain("job_timeout");
  }, 60_000);
});
