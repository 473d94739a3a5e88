// Drives the compose stack (deploy/compose.yaml) that scripts/test-containers.sh brought up,
// over HTTP with the TypeScript client (clients/typescript): a job of every operation succeeds;
// then a worker container SIGKILLed mid-job: the job is retried once by another worker and
// succeeds (attempts 2). Not a `bun test` file: scripts/test-containers.sh runs it with
//   DOCPROC_URL      http://127.0.0.1:PORT/api/v1
//   DOCPROC_KEYS     sandbox keys of one account, comma-separated (one per pair of jobs)
//   DOCPROC_LIVE_KEY a live key of the same account
//   CONTAINER_ENGINE podman or docker; PG_CONTAINER the Postgres container (for the job's worker)
// Exits non-zero with the reason on the first failure.
import { Client } from "../../clients/typescript/src/index";
import { everyOperationInputs, everyOperationJobs } from "../support/every-operation";
import { tinyPdf } from "../support/pdf";

const baseUrl = process.env.DOCPROC_URL!;
const keys = process.env.DOCPROC_KEYS!.split(",");
const liveKey = process.env.DOCPROC_LIVE_KEY!;
const engine = process.env.CONTAINER_ENGINE || "podman";
const pgContainer = process.env.PG_CONTAINER!;

function fail(msg: string): never {
  console.error(`compose-stack: FAIL: ${msg}`);
  process.exit(1);
}
const clientFor = (apiKey: string) => new Client({ apiKey, baseUrl, maxNetworkRetries: 4 });
const t0 = Date.now();
const say = (msg: string) => console.log(`compose-stack: ${((Date.now() - t0) / 1000).toFixed(1)} s ${msg}`);

// --- a job of every operation ----------------------------------------------------------------
const c0 = clientFor(keys[0]!);
const upload = (i: (typeof everyOperationInputs)[keyof typeof everyOperationInputs]) =>
  c0.files.upload(new Blob([i.bytes], { type: i.type }), i.name);
const pdf = await upload(everyOperationInputs.pdf);
const pdf2 = await upload(everyOperationInputs.pdf2);
const csv = await upload(everyOperationInputs.csv);
if ([pdf, pdf2, csv].some((f) => f.status !== "ready")) fail(`uploads not ready: ${JSON.stringify([pdf, pdf2, csv])}`);
const specs: any[] = everyOperationJobs({ pdf: pdf.id, pdf2: pdf2.id, csv: csv.id });
const results: Uint8Array[] = [];
// Two at a time with a key per pair: a sandbox key may have 2 jobs queued or running.
for (let i = 0; i < specs.length; i += 2) {
  const c = clientFor(keys[(i / 2) % keys.length]!);
  const pair = await Promise.all(
    specs
      .slice(i, i + 2)
      .map((s) =>
        c.jobs
          .run(s, { timeout: 300_000 })
          .catch((e) => fail(`${s.operation} ${s.options?.target ?? ""}: ${String(e?.message ?? e)}`)),
      ),
  );
  for (const [j, r] of pair.entries()) {
    results[i + j] = r.result as Uint8Array;
    say(
      `${specs[i + j].operation}${specs[i + j].options?.target ? ` -> ${specs[i + j].options.target}` : ""}: ${r.job.status}`,
    );
  }
}
// Chained: the protected PDF unlocked, the DOCX converted back to PDF, the XLSX to CSV.
const cc = clientFor(keys[keys.length - 1]!);
const locked = await cc.files.upload(new Blob([results[5]!], { type: "application/pdf" }), "locked.pdf");
const docx = await cc.files.upload(
  new Blob([results[7]!], { type: "application/vnd.openxmlformats-officedocument.wordprocessingml.document" }),
  "back.docx",
);
const xlsx = await cc.files.upload(
  new Blob([results[8]!], { type: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" }),
  "fruit.xlsx",
);
for (const s of [
  { operation: "unlock", file_id: locked.id, options: { password: "pw" } },
  { operation: "convert", file_id: docx.id, options: { target: "pdf" } },
  { operation: "convert", file_id: xlsx.id, options: { target: "csv" } },
] as any[]) {
  const r = await cc.jobs
    .run(s, { timeout: 300_000 })
    .catch((e) => fail(`${s.operation} ${s.options?.target ?? ""}: ${String(e?.message ?? e)}`));
  say(`${s.operation}${s.options?.target ? ` -> ${s.options.target}` : ""}: ${r.job.status}`);
}

// --- a worker container SIGKILLed mid-job ------------------------------------------------------
async function run(argv: string[]): Promise<string> {
  const p = Bun.spawn(argv, { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = [await new Response(p.stdout).text(), await new Response(p.stderr).text(), await p.exited];
  if (code !== 0) fail(`${argv.join(" ")}: ${err || out}`);
  return out.trim();
}
const psql = (q: string) =>
  run([engine, "exec", pgContainer, "psql", "-U", "docproc", "-d", "docproc", "-AtF", "|", "-c", q]);
const live = clientFor(liveKey);
const eight = await live.files.upload(new Blob([tinyPdf(8)], { type: "application/pdf" }), "eight.pdf");
const job = await live.jobs.create({ operation: "compress", file_id: eight.id } as any);
let row = "";
for (let i = 0; i < 300 && !row; i++) {
  row = await psql(`SELECT worker_id FROM jobs WHERE id = '${job.id}' AND status = 'running' AND attempts = 1`);
  if (!row) await Bun.sleep(100);
}
if (!row) fail(`job ${job.id} never ran`);
const container = row.split(":")[0]!; // the worker's hostname: its container's id
await Bun.sleep(500);
await run([engine, "kill", "--signal", "KILL", container]);
say(`SIGKILLed worker container ${container} running job ${job.id}`);
const done = await live.jobs.wait(job.id, { timeout: 180_000 });
if (done.status !== "succeeded") fail(`job after the kill: ${done.status} ${JSON.stringify(done.error)}`);
const [attempts, charges] = (
  await psql(
    `SELECT attempts, (SELECT count(*) FROM credit_ledger WHERE job_id = '${job.id}' AND entry = 'charge') FROM jobs WHERE id = '${job.id}'`,
  )
).split("|");
if (attempts !== "2" || charges !== "1")
  fail(`job after the kill: attempts ${attempts} (want 2), charges ${charges} (want 1)`);
const bytes = await live.jobs.result(job.id);
if (bytes.length < 100) fail("no result after the kill");
say(`the killed job succeeded on attempt 2, charged once`);
