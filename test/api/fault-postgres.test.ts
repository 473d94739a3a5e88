// Postgres stopped for 10 s while clients create jobs and workers run them. The service runs on
// its own embedded Postgres (another port, a temporary directory), never the machine's shared one.
// While it is down: POST /jobs answers 503 queue_unavailable with Retry-After and /healthz 503.
// Afterwards: workers have reconnected, every accepted job ran to one final state with one final
// event, billed once (one reserve, one charge), each Idempotency-Key names one job, and no
// idempotency record is left in_progress.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import postgres from "postgres";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../../src/db/embedded";
import { createAccount, createKey } from "../../src/admin/commands";
import { freePort } from "../support/service";
import { multipart } from "../support/jobs";
import { minimalPdf } from "../support/pdf";
import { spawnBun, waitFor, waitHealthy, type Spawned } from "../support/wait";

setDefaultTimeout(240_000);

let pgDir: string;
let dataDir: string;
let pg: EmbeddedDatabase;
let svc: Spawned;
let origin: string;
let sql: postgres.Sql;

beforeAll(async () => {
  pgDir = mkdtempSync(join(tmpdir(), "docproc-pgfault-"));
  dataDir = mkdtempSync(join(tmpdir(), "docproc-pgfault-data-"));
  pg = await startEmbeddedPostgres(pgDir, await freePort());
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  svc = spawnBun("src/main.ts", [], {
    DATABASE_URL: pg.url,
    PORT: String(port),
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    WORKERS: "2",
    JOB_LEASE_S: "3",
    QUEUE_POLL_MS: "500",
    JOB_TEST_PAGE_DELAY_MS: "150",
  });
  await waitHealthy(origin, svc);
  sql = postgres(pg.url, { max: 2, onnotice: () => {} });
});

afterAll(async () => {
  await svc?.stop();
  await sql?.end({ timeout: 2 }).catch(() => {});
  await pg?.stop().catch(() => {});
  rmSync(pgDir, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

describe("Postgres stopped for 10 s under load", () => {
  test("503 queue_unavailable with Retry-After and /healthz 503 while down; afterwards every accepted job ran once and was billed once", async () => {
    const account = await createAccount(sql as never, "pgfault@example.com", "starter", true);
    const { key } = await createKey(sql as never, account.id, "live");
    const base = `${origin}/api/v1`;
    const auth = { authorization: `Bearer ${key}` };
    const mp = multipart([
      { name: "file", filename: "a.pdf", contentType: "application/pdf", data: minimalPdf(3, "pgfault") },
    ]);
    const up = await fetch(`${base}/files`, {
      method: "POST",
      headers: { ...auth, "content-type": mp.contentType },
      body: mp.body,
    });
    expect(up.status).toBe(201);
    const fileId = ((await up.json()) as any).id;

    const statuses: number[] = [];
    const unavailable: { retryAfter: string | null; code: string }[] = [];
    const accepted = new Map<string, string>(); // idempotency key -> job id
    let stop = false;
    // Two clients, each retrying a request with the same Idempotency-Key until it is accepted.
    const clientLoop = async () => {
      while (!stop) {
        const idem = crypto.randomUUID();
        for (let tries = 0; tries < 60 && !stop; tries++) {
          let r: Response;
          try {
            r = await fetch(`${base}/jobs`, {
              method: "POST",
              headers: { ...auth, "content-type": "application/json", "idempotency-key": idem },
              body: JSON.stringify({ operation: "compress", file_id: fileId, options: { level: "light" } }),
              signal: AbortSignal.timeout(20_000),
            });
          } catch {
            await Bun.sleep(300);
            continue;
          }
          statuses.push(r.status);
          const body = (await r.json().catch(() => null)) as any;
          if (r.status === 202) {
            const prev = accepted.get(idem);
            if (prev) expect(body.id).toBe(prev);
            accepted.set(idem, body.id);
            break;
          }
          if (r.status === 503) unavailable.push({ retryAfter: r.headers.get("retry-after"), code: body?.error?.code });
          await Bun.sleep(r.status === 429 ? 1000 : 300);
        }
        await Bun.sleep(200);
      }
    };
    const clients = [clientLoop(), clientLoop()];

    await Bun.sleep(4000);
    const before = accepted.size;
    await pg.stop();
    const downAt = Date.now();
    await waitFor("a 503 while Postgres is down", () => unavailable.length > 0, 9000, 100);
    const health = await fetch(`${origin}/healthz`);
    expect(health.status).toBe(503);
    await Bun.sleep(Math.max(0, 10_000 - (Date.now() - downAt)));
    pg = await startEmbeddedPostgres(pgDir, 1);
    await waitHealthy(origin, svc, 200, 30_000);
    await Bun.sleep(5000);
    stop = true;
    await Promise.all(clients);

    expect(before).toBeGreaterThan(0);
    expect(accepted.size).toBeGreaterThan(before); // jobs were accepted after the outage too
    for (const u of unavailable) {
      expect(u.code).toBe("queue_unavailable");
      expect(Number(u.retryAfter)).toBeGreaterThan(0);
    }
    expect(statuses.filter((s) => s >= 500 && s !== 503)).toEqual([]);

    // The workers reconnected: every accepted job reaches a final state.
    const ids = [...accepted.values()];
    expect(new Set(ids).size).toBe(ids.length);
    await waitFor(
      "every accepted job final",
      async () => {
        const [r] = await sql`SELECT count(*)::int AS n FROM jobs WHERE status IN ('queued', 'running')`;
        return r!.n === 0;
      },
      90_000,
      500,
    );
    const jobs = await sql`SELECT id, status::text, pages_processed FROM jobs`;
    expect(jobs.length).toBe(ids.length); // no job without an accepted answer, none lost
    for (const j of jobs) expect(j.status).toBe("succeeded");
    const events =
      await sql`SELECT payload->'data'->'object'->>'id' AS id, count(*)::int AS n FROM events WHERE type LIKE 'job.%' GROUP BY 1`;
    expect(events.length).toBe(ids.length);
    for (const e of events) expect(e.n).toBe(1);
    const ledger = await sql`
      SELECT j.id, j.pages_processed,
        count(*) FILTER (WHERE l.entry = 'reserve')::int AS reserves,
        count(*) FILTER (WHERE l.entry = 'charge')::int AS charges,
        coalesce(sum(l.pages) FILTER (WHERE l.entry = 'charge'), 0)::int AS charged_pages
      FROM jobs j LEFT JOIN credit_ledger l ON l.job_id = j.id GROUP BY j.id`;
    for (const l of ledger) {
      expect(l.reserves).toBe(1);
      expect(l.charges).toBe(1);
      expect(l.charged_pages).toBe(l.pages_processed);
    }
    const [stuck] = await sql`SELECT count(*)::int AS n FROM idempotency_records WHERE state = 'in_progress'`;
    expect(stuck!.n).toBe(0);
    const [recs] = await sql`SELECT count(*)::int AS n FROM idempotency_records`;
    expect(recs!.n).toBe(ids.length);
  });
});
