// Postgres writes per job, for docs/scaling.md: runs N sandbox jobs of one operation on a
// fresh database and reads the database's own statistics (rows inserted/updated/deleted and
// committed transactions) before and after. Usage: bun scripts/bench/pg-writes.ts [N] [pages]
import postgres from "postgres";
import { startService } from "../../test/support/service";
import { createJob, finalStatuses, uploadBytes, waitJobRow } from "../../test/support/jobs";
import { tinyPdf } from "../../test/support/pdf";

const n = Number(process.argv[2] || 20);
const pages = Number(process.argv[3] || 1);
const svc = await startService({ workers: 1 });
try {
  const { key } = await svc.newKey();
  const f = (await uploadBytes(svc, key, tinyPdf(pages), "in.pdf", "application/pdf")).json;
  const stats = postgres(svc.databaseUrl, { max: 1, onnotice: () => {} });
  const read = async () => {
    await Bun.sleep(11_000); // idle backends flush their statistics at least every 10 s
    await stats`SELECT pg_stat_clear_snapshot()`;
    const [t] =
      await stats`SELECT coalesce(sum(n_tup_ins), 0)::int AS ins, coalesce(sum(n_tup_upd), 0)::int AS upd, coalesce(sum(n_tup_del), 0)::int AS del FROM pg_stat_user_tables`;
    const [d] =
      await stats`SELECT xact_commit::int AS commits FROM pg_stat_database WHERE datname = current_database()`;
    return { ...t!, ...d! } as { ins: number; upd: number; del: number; commits: number };
  };
  const before = await read();
  for (let i = 0; i < n; i++) {
    const job = await createJob(svc, key, { operation: "compress", file_id: f.id });
    // Polled over SQL (reads only), not GET /jobs: the key is limited to 30 requests a minute.
    if ((await waitJobRow(svc, job.id, finalStatuses, 60_000)).status !== "succeeded") throw new Error("job failed");
  }
  const after = await read();
  const per = (k: keyof typeof before) => ((after[k] - before[k]) / n).toFixed(1);
  console.log(
    JSON.stringify({
      jobs: n,
      pages_per_job: pages,
      rows_inserted_per_job: per("ins"),
      rows_updated_per_job: per("upd"),
      rows_deleted_per_job: per("del"),
      commits_per_job_incl_reads: per("commits"),
    }),
  );
  await stats.end();
} finally {
  await svc.stop();
}
