// Issue 3, point 3 and "Done when": several workers on several machines share one database and
// never run a job twice. Three worker processes — one under the service's supervisor and two
// started as separate `--role worker` nodes on the same DATABASE_URL (and the shared DATA_DIR,
// standing in for the object store) — run 200 rotate jobs: every job succeeds with attempts = 1
// and exactly one job.succeeded event, and the work is spread over all three workers.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { client, startService, type Service, hasCorpus } from "../support/service";
import { spawnBun, waitFor, type Spawned } from "../support/wait";
import { keyFor, uploadOk, workerPidOf } from "../support/jobs";

let svc: Service;
const nodes: Spawned[] = [];

beforeAll(async () => {
  svc = await startService({ workers: 1 });
  for (let i = 0; i < 2; i++) {
    nodes.push(
      spawnBun("src/main.ts", ["--role", "worker"], {
        DATABASE_URL: svc.databaseUrl,
        DATA_DIR: svc.dataDir,
        WORKERS: "1",
        PORT: "1",
      }),
    );
  }
  // All three workers are up when each holds its LISTEN connection.
  await waitFor(
    "three listening workers",
    async () => {
      const [r] =
        await svc.sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'listen%'`;
      return r!.n >= 3;
    },
    30_000,
  );
}, 90_000);
afterAll(async () => {
  await Promise.all(nodes.map((n) => n.stop()));
  await svc?.stop();
}, 90_000);

describe("3 workers, 200 jobs", () => {
  test.skipIf(!hasCorpus)(
    "each job runs exactly once (attempts 1, one event, one result) and all three workers take part",
    async () => {
      const owner = await svc.newKey();
      const file = await uploadOk(svc, owner.key, "pdfa-crazyones.pdf");

      // 180 jobs straight into the queue in one statement (POST /jobs would hit the per-key limits),
      // then one NOTIFY; 20 more over HTTP from 10 keys at once, each waking the workers itself.
      const inserted = await svc.sql`
      INSERT INTO jobs (account_id, key_id, mode, operation, kind, file_ids, options, pages_estimated, credits_per_page, created_at)
      SELECT ${owner.accountId}, ${owner.keyId}, 'test', 'rotate', 'page_ops', ARRAY[${file.id}]::uuid[], '{"degrees":90}', 1, 0, clock_timestamp()
        FROM generate_series(1, 180)
      RETURNING id`;
      await svc.sql`NOTIFY jobs`;
      const keys = await Promise.all(Array.from({ length: 10 }, () => keyFor(svc, owner.accountId, "test")));
      const viaHttp = await Promise.all(
        keys.flatMap((k) =>
          [0, 1].map(() =>
            client(svc.baseUrl, k.key)("POST", "/jobs", {
              operation: "rotate",
              file_id: file.id,
              options: { degrees: 180 },
            }),
          ),
        ),
      );
      for (const r of viaHttp) expect(r.status).toBe(202);
      const ids = [...inserted.map((r) => r.id as string), ...viaHttp.map((r) => r.json.id as string)];
      expect(new Set(ids).size).toBe(200);

      await waitFor(
        "all 200 jobs to finish",
        async () => {
          const [r] =
            await svc.sql`SELECT count(*)::int AS n FROM jobs WHERE id IN ${svc.sql(ids)} AND status IN ('succeeded', 'failed', 'cancelled')`;
          return r!.n === 200;
        },
        75_000,
        200,
      );

      const rows =
        await svc.sql`SELECT id, status, attempts, worker_id, error, result, started_at, finished_at FROM jobs WHERE id IN ${svc.sql(ids)}`;
      const bad = rows.filter((r) => r.status !== "succeeded" || r.attempts !== 1);
      expect(bad.map((r) => ({ id: r.id, status: r.status, attempts: r.attempts, error: r.error }))).toEqual([]);

      // Exactly one job.succeeded per job, and no other job event.
      const events =
        await svc.sql`SELECT payload->'data'->'object'->>'id' AS job_id, type FROM events WHERE type LIKE 'job.%'`;
      const perJob = new Map<string, string[]>();
      for (const e of events) perJob.set(e.job_id, [...(perJob.get(e.job_id) ?? []), e.type]);
      for (const id of ids) expect({ id, types: perJob.get(id) }).toEqual({ id, types: ["job.succeeded"] });

      // One stored result each.
      for (const r of rows) expect(existsSync(join(svc.dataDir, "blobs", r.result.storage_key))).toBe(true);

      // The work is spread over the three worker processes of the three nodes.
      const perWorker = new Map<number, number>();
      for (const r of rows) perWorker.set(workerPidOf(r.worker_id), (perWorker.get(workerPidOf(r.worker_id)) ?? 0) + 1);
      const spread = [...perWorker.values()].sort((a, b) => b - a);
      console.log(`jobs per worker: ${JSON.stringify(Object.fromEntries(perWorker))}`);
      expect(perWorker.size).toBe(3);
      for (const n of spread) expect(n).toBeGreaterThanOrEqual(10);
    },
    90_000,
  );

  test("the queue is empty and no lease is left behind", async () => {
    const [r] = await svc.sql`SELECT count(*) FILTER (WHERE status IN ('queued', 'running'))::int AS active,
                                     count(*) FILTER (WHERE lease_expires_at IS NOT NULL)::int AS leases FROM jobs`;
    expect(r).toEqual({ active: 0, leases: 0 });
  }, 90_000);
});
