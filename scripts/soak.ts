// Soak test: the whole service (supervisor, API, inspector, workers) under a mixed workload of
// every operation from many keys at their rate limits, with webhooks to a local receiver; at the
// end it checks run-once, billing, deliveries, RSS slopes, fd and temp-file leaks and prints a report.
//
//   bun run soak [--minutes 10] [--keys 6] [--workers 2] [--json out.json]
//
// Needs a Postgres like the tests (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test;
// a fresh database is created and dropped). Uses the corpus (../shared/corpus or CORPUS_DIR) when
// present, else small self-made files (then the office conversions are left out).
import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { limits } from "../src/domain/pricing";
import { startService, type Service } from "../test/support/service";
import { multipart } from "../test/support/jobs";
import { type Input, loadInputs } from "./soak-inputs";
import { countFiles, procs, sampleAll, slopeMbPerHour, tmpEntries } from "./soak-procs";

const { values: argv } = parseArgs({
  options: {
    minutes: { type: "string", default: "10" },
    keys: { type: "string", default: "6" },
    workers: { type: "string", default: "2" },
    json: { type: "string" },
  },
});
const minutes = Number(argv.minutes);
const nKeys = Math.max(2, Number(argv.keys));
const nWorkers = Math.max(1, Number(argv.workers));
if (!(minutes > 0)) throw new Error("--minutes must be a positive number");

// ---------------------------------------------------------------- webhook receiver
const received = new Map<string, number>(); // event id -> successful receipts
let receiverHits = 0;
let receiverRefused = 0;
const receiver = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const body = await req.text();
    receiverHits++;
    let id = "";
    try {
      id = JSON.parse(body).id;
    } catch {}
    // About one delivery in twelve is refused, so the retry path runs under load too.
    if (Math.random() < 1 / 12) {
      receiverRefused++;
      return new Response("try later", { status: 503 });
    }
    received.set(id, (received.get(id) ?? 0) + 1);
    return new Response(null, { status: 204 });
  },
});

// ---------------------------------------------------------------- workload
const statusCounts = new Map<string, number>();
const fiveXX: string[] = [];
const createdJobs = new Set<string>();
let requests = 0;

function note(op: string, status: number, text: string) {
  requests++;
  const k = `${op} ${status}`;
  statusCounts.set(k, (statusCounts.get(k) ?? 0) + 1);
  // POST /webhooks/{id}/test answers the spec's 502 webhook_delivery_failed when the endpoint
  // refuses, which the receiver does on purpose now and then: an answer, not a fault.
  if (status >= 500 && !(op === "webhook_test" && status === 502 && text.includes('"webhook_delivery_failed"')))
    fiveXX.push(`${op} ${status} ${text.slice(0, 300)}`);
}

interface Client {
  key: string;
  mode: "live" | "test";
  files: { id: string; kind: string; pages: number }[];
  jobs: string[];
  webhookId?: string;
}

function rnd<T>(a: T[]): T {
  return a[Math.floor(Math.random() * a.length)]!;
}

async function main() {
  const inputs = loadInputs();
  const started = Date.now();
  console.log(`soak: ${minutes} min, ${nKeys} keys, ${nWorkers} workers, inputs: ${inputs.source}`);
  const svc: Service = await startService({
    workers: nWorkers,
    env: { WEBHOOK_RETRY_DELAYS_S: "2,4,8,16,32", SWEEP_INTERVAL_S: "30", LOG_LEVEL: "warn", JOB_TIMEOUT_S: "180" },
  });
  const tmpBefore = tmpEntries();
  const sampler = setInterval(() => sampleAll(svc.proc.pid), 10_000);
  sampleAll(svc.proc.pid);

  const clients: Client[] = [];
  for (let i = 0; i < nKeys; i++) {
    const mode = i % 2 ? "test" : "live";
    const k = await svc.newKey({ mode });
    clients.push({ key: k.key, mode, files: [], jobs: [] });
  }

  async function call(
    c: Client,
    op: string,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) {
    const h: Record<string, string> = { authorization: `Bearer ${c.key}`, ...headers };
    let payload: any;
    if (body instanceof Uint8Array) payload = body;
    else if (body !== undefined) {
      payload = JSON.stringify(body);
      h["content-type"] = "application/json";
    }
    try {
      const r = await fetch(svc.baseUrl + path, {
        method,
        headers: h,
        body: payload,
        signal: AbortSignal.timeout(120_000),
      });
      const buf = new Uint8Array(await r.arrayBuffer());
      const text = (r.headers.get("content-type") || "").includes("json") ? new TextDecoder().decode(buf) : "";
      note(op, r.status, text);
      let json: any = null;
      try {
        json = text ? JSON.parse(text) : null;
      } catch {}
      return { status: r.status, json, headers: r.headers };
    } catch (e) {
      note(op, 0, String(e));
      fiveXX.push(`${op} transport error: ${e}`);
      return { status: 0, json: null, headers: new Headers() };
    }
  }

  async function uploadInput(c: Client, inp: Input, kind: string) {
    const mp = multipart([{ name: "file", filename: inp.name, contentType: inp.contentType, data: inp.bytes }]);
    const r = await call(c, "upload", "POST", "/files", mp.body, { "content-type": mp.contentType });
    if (r.status === 201) c.files.push({ id: r.json.id, kind, pages: r.json.page_count ?? 1 });
    return r.status === 201 ? (r.json.id as string) : null;
  }

  function fileOf(c: Client, kind: string): string | null {
    const f = c.files.filter((x) => x.kind === kind);
    return f.length ? rnd(f).id : null;
  }

  type Action = (c: Client) => Promise<void>;
  const job =
    (op: string, make: (c: Client) => any): Action =>
    async (c) => {
      const body = make(c);
      if (!body) return;
      const r = await call(
        c,
        `job:${op}`,
        "POST",
        "/jobs",
        { ...body, metadata: { soak: "1" } },
        { "idempotency-key": crypto.randomUUID() },
      );
      if (r.status === 202) {
        c.jobs.push(r.json.id);
        createdJobs.add(r.json.id);
      }
    };
  const pdf = (c: Client) => fileOf(c, "pdf");
  const pdfFile = (c: Client, minPages = 1) => {
    const f = c.files.filter((x) => x.kind === "pdf" && x.pages >= minPages);
    return f.length ? rnd(f) : null;
  };
  const actions: [number, Action][] = [
    [3, async (c) => void (await uploadInput(c, rnd(inputs.pdfs), "pdf"))],
    [1, async (c) => void (inputs.docx.length && (await uploadInput(c, rnd(inputs.docx), "docx")))],
    [1, async (c) => void (inputs.xlsx.length && (await uploadInput(c, rnd(inputs.xlsx), "xlsx")))],
    [1, async (c) => void (await uploadInput(c, rnd(inputs.csv), "csv"))],
    [1, async (c) => void (inputs.images.length && (await uploadInput(c, rnd(inputs.images), "image")))],
    [
      2,
      job(
        "rotate",
        (c) => pdf(c) && { operation: "rotate", file_id: pdf(c), options: { degrees: rnd([90, 180, 270]) } },
      ),
    ],
    [
      1,
      job("reorder", (c) => {
        const f = pdfFile(c);
        return (
          f && {
            operation: "reorder",
            file_id: f.id,
            options: { order: Array.from({ length: f.pages }, (_, i) => f.pages - 1 - i) },
          }
        );
      }),
    ],
    [
      1,
      job("delete_pages", (c) => {
        const f = pdfFile(c, 2);
        return f && { operation: "delete_pages", file_id: f.id, options: { pages: [0] } };
      }),
    ],
    [
      1,
      job(
        "merge",
        (c) =>
          c.files.filter((f) => f.kind === "pdf").length >= 2 && {
            operation: "merge",
            file_ids: c.files
              .filter((f) => f.kind === "pdf")
              .slice(-2)
              .map((f) => f.id),
          },
      ),
    ],
    [1, job("split", (c) => pdf(c) && { operation: "split", file_id: pdf(c), options: { mode: "every_page" } })],
    [
      1,
      job("protect", (c) => pdf(c) && { operation: "protect", file_id: pdf(c), options: { user_password: "soak-pw" } }),
    ],
    [1, job("unlock", (c) => pdf(c) && { operation: "unlock", file_id: pdf(c), options: {} })],
    [
      1,
      job(
        "convert:jpg",
        (c) => pdf(c) && { operation: "convert", file_id: pdf(c), options: { target: "jpg", dpi: 72, pages: [0] } },
      ),
    ],
    [1, job("convert:docx", (c) => pdf(c) && { operation: "convert", file_id: pdf(c), options: { target: "docx" } })],
    [
      1,
      job(
        "convert:pdf",
        (c) => fileOf(c, "docx") && { operation: "convert", file_id: fileOf(c, "docx"), options: { target: "pdf" } },
      ),
    ],
    [
      1,
      job(
        "convert:csv",
        (c) => fileOf(c, "xlsx") && { operation: "convert", file_id: fileOf(c, "xlsx"), options: { target: "csv" } },
      ),
    ],
    [
      1,
      job(
        "convert:xlsx",
        (c) => fileOf(c, "csv") && { operation: "convert", file_id: fileOf(c, "csv"), options: { target: "xlsx" } },
      ),
    ],
    [
      1,
      job(
        "compress",
        (c) =>
          pdf(c) && {
            operation: "compress",
            file_id: pdf(c),
            options: { level: rnd(["light", "balanced", "strong"]) },
          },
      ),
    ],
    [
      1,
      job(
        "redact",
        (c) =>
          pdf(c) && {
            operation: "redact",
            file_id: pdf(c),
            options: { regions: [{ page: 0, x: 50, y: 50, w: 200, h: 40 }], dpi: 72 },
          },
      ),
    ],
    [1, job("ocr", (c) => fileOf(c, "image") && { operation: "ocr", file_id: fileOf(c, "image") })],
    [
      1,
      job("searchable_pdf", (c) => fileOf(c, "image") && { operation: "searchable_pdf", file_id: fileOf(c, "image") }),
    ],
    [
      3,
      async (c) => {
        const id = c.jobs.length ? rnd(c.jobs.slice(-10)) : null;
        if (!id) return;
        const r = await call(c, "get_job", "GET", `/jobs/${id}`);
        if (r.json?.status === "succeeded") await call(c, "result", "GET", `/jobs/${id}/result`);
      },
    ],
    [
      1,
      async (c) =>
        void (c.jobs.length && (await call(c, "cancel", "POST", `/jobs/${c.jobs[c.jobs.length - 1]}/cancel`))),
    ],
    [1, async (c) => void (await call(c, "list_jobs", "GET", "/jobs?limit=10"))],
    [1, async (c) => void (await call(c, "list_files", "GET", "/files?limit=10"))],
    [
      1,
      async (c) => {
        const f = c.files.length > 6 ? c.files.shift() : null;
        if (f) await call(c, "delete_file", "DELETE", `/files/${f.id}`);
      },
    ],
    [1, async (c) => void (await call(c, "account", "GET", "/account"))],
    [1, async (c) => void (await call(c, "usage", "GET", "/usage"))],
    [1, async (c) => void (await call(c, "operations", "GET", "/operations"))],
    [1, async (c) => void (c.webhookId && (await call(c, "webhook_test", "POST", `/webhooks/${c.webhookId}/test`)))],
    [
      1,
      async (c) =>
        void (c.webhookId && (await call(c, "deliveries", "GET", `/webhooks/${c.webhookId}/deliveries?limit=10`))),
    ],
  ];
  const weighted = actions.flatMap(([w, a]) => Array(w).fill(a) as Action[]);

  const endAt = started + minutes * 60_000;
  async function runClient(c: Client, i: number) {
    // Live endpoints must be https; the local receiver is plain http, so sandbox keys subscribe.
    if (c.mode === "test") {
      const wh = await call(c, "create_webhook", "POST", "/webhooks", {
        url: `http://127.0.0.1:${receiver.port}/k${i}`,
        description: `soak ${i}`,
      });
      if (wh.status === 201) c.webhookId = wh.json.id;
    }
    // Just under the key's rate limit (each action is one or two requests).
    const gapMs = (60_000 / limits[c.mode].requests_per_minute) * 1.05;
    while (Date.now() < endAt) {
      const t0 = Date.now();
      await rnd(weighted)(c);
      await Bun.sleep(Math.max(0, gapMs - (Date.now() - t0)));
    }
  }
  const progress = setInterval(() => {
    const mins = ((Date.now() - started) / 60_000).toFixed(1);
    console.log(
      `[${mins} min] requests ${requests}, jobs ${createdJobs.size}, 5xx ${fiveXX.length}, webhook receipts ${receiverHits}`,
    );
  }, 60_000);
  await Promise.all(clients.map((c, i) => runClient(c, i)));
  clearInterval(progress);

  // Drain: every job final, every delivery final (bounded).
  const drainStart = Date.now();
  let drained = false;
  while (Date.now() - drainStart < 5 * 60_000) {
    const [q] = await svc.sql`SELECT
      (SELECT count(*) FROM jobs WHERE status IN ('queued','running'))::int AS jobs,
      (SELECT count(*) FROM webhook_deliveries WHERE status IN ('pending','in_flight'))::int AS deliveries`;
    if (q!.jobs === 0 && q!.deliveries === 0) {
      drained = true;
      break;
    }
    await Bun.sleep(2000);
  }
  await Bun.sleep(12_000); // one more sample after the drain
  sampleAll(svc.proc.pid);
  clearInterval(sampler);

  // ------------------------------------------------------------ checks
  const problems: string[] = [];
  const jobsByStatus = await svc.sql`SELECT status::text, count(*)::int AS n FROM jobs GROUP BY 1 ORDER BY 1`;
  const retried = await svc.sql`SELECT id, operation, attempts, status::text FROM jobs WHERE attempts > 1`;
  const notFinal = await svc.sql`SELECT count(*)::int AS n FROM jobs WHERE status IN ('queued','running')`;
  if (notFinal[0]!.n) problems.push(`${notFinal[0]!.n} jobs not final after the drain`);
  const finalEvents = await svc.sql`
    SELECT j.id, count(e.id)::int AS n FROM jobs j
    LEFT JOIN events e ON e.payload->'data'->'object'->>'id' = j.id::text AND e.type IN ('job.succeeded','job.failed','job.cancelled')
    WHERE j.status IN ('succeeded','failed','cancelled') GROUP BY j.id HAVING count(e.id) <> 1`;
  if (finalEvents.length) problems.push(`${finalEvents.length} final jobs without exactly one final event`);
  const failedCodes =
    await svc.sql`SELECT operation, error->>'code' AS code, count(*)::int AS n FROM jobs WHERE status = 'failed' GROUP BY 1, 2 ORDER BY 3 DESC`;

  // Billing: billed succeeded jobs have one charge of pages_processed x credits_per_page; other
  // billed final jobs a release and no charge; nothing unbilled has entries.
  const billing = await svc.sql`
    SELECT j.id, j.status::text, j.billed, j.pages_processed, j.credits_per_page,
      (SELECT count(*) FROM credit_ledger l WHERE l.job_id = j.id AND entry = 'reserve')::int AS reserves,
      (SELECT count(*) FROM credit_ledger l WHERE l.job_id = j.id AND entry = 'release')::int AS releases,
      (SELECT coalesce(sum(credits), 0) FROM credit_ledger l WHERE l.job_id = j.id AND entry = 'charge')::int AS charged,
      (SELECT coalesce(sum(pages), 0) FROM credit_ledger l WHERE l.job_id = j.id AND entry = 'charge')::int AS charged_pages,
      (SELECT count(*) FROM credit_ledger l WHERE l.job_id = j.id AND entry = 'charge')::int AS charges
    FROM jobs j`;
  let billedJobs = 0;
  let pagesProcessed = 0;
  let pagesCharged = 0;
  for (const b of billing) {
    if (!b.billed) {
      if (b.reserves || b.charges) problems.push(`unbilled job ${b.id} has ledger entries`);
      continue;
    }
    billedJobs++;
    if (b.reserves !== 1) problems.push(`job ${b.id}: ${b.reserves} reservations`);
    if (b.status === "succeeded") {
      pagesProcessed += b.pages_processed ?? 0;
      pagesCharged += b.charged_pages;
      if (
        b.charges !== 1 ||
        b.charged_pages !== b.pages_processed ||
        b.charged !== b.pages_processed * b.credits_per_page
      )
        problems.push(
          `job ${b.id}: ${b.charges} charges, ${b.charged_pages} pages charged, ${b.pages_processed} processed`,
        );
    } else if (b.charges !== 0 || b.releases !== 1)
      problems.push(`job ${b.id} (${b.status}): ${b.charges} charges, ${b.releases} releases`);
  }

  // Deliveries: every event of an account with an endpoint has a final delivery; every succeeded
  // delivery reached the receiver; the receiver saw no event the database does not know.
  const deliveries = await svc.sql`SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY 1 ORDER BY 1`;
  const undelivered = await svc.sql`
    SELECT e.id FROM events e JOIN webhook_endpoints w ON w.account_id = e.account_id AND w.mode = e.mode AND w.deleted_at IS NULL
    WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.endpoint_id = w.id AND d.status IN ('succeeded','failed'))
      AND (cardinality(w.events) = 0 OR e.type = ANY(w.events)) AND e.created_at >= w.created_at`;
  if (undelivered.length) problems.push(`${undelivered.length} events without a final delivery`);
  const succeededEvents = await svc.sql`SELECT DISTINCT event_id FROM webhook_deliveries WHERE status = 'succeeded'`;
  const missing = succeededEvents.filter((r) => !received.has(r.event_id));
  if (missing.length) problems.push(`${missing.length} deliveries marked succeeded that the receiver never accepted`);
  const knownEvents = new Set((await svc.sql`SELECT id FROM events`).map((r) => r.id));
  const unknown = [...received.keys()].filter((id) => !knownEvents.has(id));
  if (unknown.length) problems.push(`${unknown.length} received events unknown to the database`);
  const failedDeliveries =
    await svc.sql`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'failed' AND attempt = 6`;

  // Disk: blobs without a live row, temp files left behind.
  const fileRows = new Set(
    (await svc.sql`SELECT id::text FROM files WHERE status IN ('ready','pending_upload')`).map((r) => r.id),
  );
  const blobFilesDir = join(svc.dataDir, "blobs", "files");
  let orphanBlobs = 0;
  if (existsSync(blobFilesDir))
    for (const pre of readdirSync(blobFilesDir))
      for (const f of readdirSync(join(blobFilesDir, pre))) if (!fileRows.has(f)) orphanBlobs++;
  if (orphanBlobs) problems.push(`${orphanBlobs} upload blobs on disk without a live file row`);
  const scratchLeft = countFiles(join(svc.dataDir, "tmp"));
  if (scratchLeft) problems.push(`${scratchLeft} files left in DATA_DIR/tmp`);
  const tmpAfter = [...tmpEntries()].filter((e) => !tmpBefore.has(e));
  const tmpNew = tmpAfter.filter((e) => {
    try {
      return statSync(join(tmpdir(), e)).mtimeMs >= started;
    } catch {
      return false;
    }
  });

  // Processes: RSS slope over the part after warm-up (first fifth), fds at warm-up end vs end.
  const warm = started + (Date.now() - started) * 0.2;
  const procRows: string[] = [];
  for (const [pid, p] of procs) {
    const s = p.samples.filter((x) => x.t >= warm);
    if (s.length < 3) continue;
    const slope = slopeMbPerHour(s);
    const first = s[0]!;
    const last = s[s.length - 1]!;
    procRows.push(
      `${String(pid).padStart(8)} ${p.label.padEnd(14)} rss ${(first.rssKb / 1024).toFixed(0).padStart(5)} -> ${(last.rssKb / 1024).toFixed(0).padStart(5)} MB  slope ${slope.toFixed(1).padStart(7)} MB/h  fds ${first.fds} -> ${last.fds}  (${s.length} samples)`,
    );
    if (last.fds - first.fds > 16) problems.push(`pid ${pid} (${p.label}) fds grew ${first.fds} -> ${last.fds}`);
  }
  const shortLived = [...procs.values()].filter((p) => p.samples.length < 3).length;
  if (fiveXX.length) problems.push(`${fiveXX.length} 5xx / transport errors`);
  if (!drained) problems.push("queue or deliveries not drained within 5 minutes");

  const report = [
    `# soak report`,
    `duration ${minutes} min (+ drain ${((Date.now() - drainStart) / 1000).toFixed(0)} s), ${nKeys} keys (${clients.filter((c) => c.mode === "live").length} live), ${nWorkers} workers, inputs: ${inputs.source}`,
    `requests ${requests}; by operation and status:`,
    ...[...statusCounts].sort().map(([k, n]) => `  ${k}: ${n}`),
    `jobs by status: ${jobsByStatus.map((r) => `${r.status} ${r.n}`).join(", ")}; retried (attempts > 1): ${retried.length}${retried.length ? " " + JSON.stringify(retried) : ""}`,
    `failed jobs by code: ${failedCodes.map((r) => `${r.operation}/${r.code} ${r.n}`).join(", ") || "none"}`,
    `billing: ${billedJobs} billed jobs; pages processed by succeeded billed jobs ${pagesProcessed}, pages charged ${pagesCharged}`,
    `webhooks: receiver hits ${receiverHits} (${receiverRefused} refused with 503 on purpose), distinct events accepted ${received.size}; deliveries by status: ${deliveries.map((r) => `${r.status} ${r.n}`).join(", ")}; gave up after 6 attempts: ${failedDeliveries[0]!.n}`,
    `disk: orphan upload blobs ${orphanBlobs}, files left in DATA_DIR/tmp ${scratchLeft}; new entries in ${tmpdir()} (informational: the directory is shared with every other process on the machine): ${tmpNew.length}${tmpNew.length ? " " + tmpNew.slice(0, 10).join(" ") : ""}`,
    `processes (after warm-up; ${shortLived} short-lived processes not shown):`,
    ...procRows,
    fiveXX.length ? `5xx / transport errors (first 10):\n  ${fiveXX.slice(0, 10).join("\n  ")}` : "5xx: none",
    problems.length ? `PROBLEMS:\n  ${problems.slice(0, 40).join("\n  ")}` : "RESULT: all checks passed",
  ].join("\n");
  console.log(report);
  if (argv.json)
    writeFileSync(
      argv.json,
      JSON.stringify({ report, problems, statusCounts: Object.fromEntries(statusCounts) }, null, 2),
    );
  receiver.stop(true);
  await svc.stop();
  process.exit(problems.length ? 1 : 0);
}

await main();
