// The cost of the task machinery of page-parallel jobs in Postgres alone (docs/scaling.md,
// "Why the hand-made queue"): on a fresh database of the test Postgres, one job split into
// TASKS tasks, then per task: its claim, one heartbeat and its completion (the statements of
// src/queue/tasks.ts, one worker, sequentially), and the empty task claim that every job claim
// now makes first. Prints one JSON object with the medians and p95s in milliseconds.
// Usage: DATABASE_URL=postgres://... bun scripts/bench/task-queue.ts   (TASKS, default 200)
import { randomUUID } from "node:crypto";
import { createDatabase } from "../../test/support/service";
import { connect, db, disconnect } from "../../src/db/client";
import { migrate } from "../../src/db/migrate";
import { claimNextTask, completeTask, splitJob, taskHeartbeat } from "../../src/queue/tasks";
import { claimNextJob } from "../../src/queue/claim";
import { pct } from "./pagework-lib";

const n = Number(process.env.TASKS || 200);
const database = await createDatabase();
try {
  connect(database.url, 4);
  await migrate(db());
  const [account] = await db()`INSERT INTO accounts (email, plan) VALUES ('bench@example.com', 'starter') RETURNING id`;
  const [key] = await db()`
    INSERT INTO api_keys (account_id, mode, lookup, secret_hash, last4, scopes)
    VALUES (${account!.id}, 'test', 'bench', '\\x00', '0000', '{}') RETURNING id`;
  const time = async (fn: () => Promise<unknown>) => {
    const t = performance.now();
    await fn();
    return performance.now() - t;
  };
  const jobId = randomUUID();
  await db()`INSERT INTO jobs (id, account_id, key_id, mode, operation, kind, file_ids, pages_estimated, credits_per_page)
             VALUES (${jobId}, ${account!.id}, ${key!.id}, 'test', 'ocr', 'ocr', ARRAY[${randomUUID()}]::uuid[], ${n}, 3)`;
  const job = (await claimNextJob("bench-worker"))!;
  const splitMs = await time(() =>
    splitJob(
      job,
      "bench-worker",
      Array.from({ length: n }, (_, i) => [i]),
    ),
  );
  const claim: number[] = [];
  const beat: number[] = [];
  const complete: number[] = [];
  for (let i = 0; i < n; i++) {
    let task = null;
    claim.push(await time(async () => (task = await claimNextTask("bench-worker", true))));
    const t = task!;
    beat.push(await time(() => taskHeartbeat(t, "bench-worker", 0, 0)));
    complete.push(
      await time(() => completeTask(t, "bench-worker", { key: `partial-${i}`, pages_processed: 1, summary: {} })),
    );
  }
  const empty: number[] = [];
  for (let i = 0; i < n; i++) empty.push(await time(() => claimNextTask("bench-worker", true)));
  const s = (v: number[]) => ({ p50: +pct(v, 50).toFixed(3), p95: +pct(v, 95).toFixed(3) });
  console.log(
    JSON.stringify({
      tasks: n,
      split_ms: +splitMs.toFixed(2),
      claim_ms: s(claim),
      heartbeat_ms: s(beat),
      complete_ms: s(complete),
      per_task_ms_p50: +(pct(claim, 50) + pct(beat, 50) + pct(complete, 50)).toFixed(3),
      empty_task_claim_ms: s(empty),
    }),
  );
} finally {
  await disconnect();
  await database.drop();
}
