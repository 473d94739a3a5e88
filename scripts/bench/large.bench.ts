// Large documents (docs/scaling.md, "Large documents"): a generated 5,000-page scanned PDF of
// about 2.2 GB (--quick: 500 pages) through the whole service on an object store (Garage), one
// worker process: the API's peak resident memory while it receives the file (multipart, and a
// presigned PUT then complete), the inspector's while it counts the pages, the API's while it
// streams a result out, and each worker operation's peak (rotate, split, compress, pdf -> jpg,
// OCR blocks and searchable PDF of a 50-page range), with its time.
//
// Peaks are /proc/<pid>/status VmHWM, reset before each step (clear_refs 5), so each is the
// peak of that step alone; "idle" is the process's resident size just before it. Each job runs
// on a fresh worker process (the previous one is stopped and the supervisor starts another):
// memory an earlier operation freed but the allocator kept would otherwise count as this one's. Job time is
// jobs.finished_at - started_at (the database clock). The account's page limit is raised with
// the admin CLI, as an operator does (`account:set --pages-per-job`).
import { mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { startGarage } from "../../test/support/garage";
import { createJob, finishedJob, rolePids } from "../../test/support/jobs";
import { client, type Service, startService } from "../../test/support/service";
import { childPids, largePdf, memOf, resetPeak, streamUpload } from "./large-lib";
import { f2, load1 } from "./pagework-lib";
import type { BenchContext, BenchSection } from "./run";

interface Step {
  step: string;
  process: "api" | "inspector" | "worker";
  idleMb: number;
  peakMb: number;
  seconds: number;
  /** Bytes of the result (jobs) or of what went through (uploads, downloads). */
  bytes?: number;
  pages?: number;
  detail?: string;
}

const mb = (n: number) => Math.round(n);

/** Stops the worker `old` (when given) and returns the pid of the one the supervisor starts
 * in its place, once it has settled. */
async function freshWorker(svc: Service, old?: number): Promise<number> {
  if (old) process.kill(old, "SIGTERM");
  for (;;) {
    const [pid] = await rolePids(svc, "worker");
    if (pid && pid !== old) {
      await Bun.sleep(3000);
      return pid;
    }
    await Bun.sleep(200);
  }
}
const gb = (bytes: number) => (bytes / 1e9).toFixed(2);

export default async function (ctx: BenchContext): Promise<BenchSection> {
  const pages = ctx.quick ? 500 : 5000;
  const ocrPages = 50;
  const dir = join(ctx.outDir, "large");
  mkdirSync(dir, { recursive: true });
  const pdf = largePdf(dir, pages);
  const size = statSync(pdf).size;
  const loadBefore = load1();
  const steps: Step[] = [];

  const garage = await startGarage();
  const svc = await startService({
    workers: 1,
    env: {
      ...garage.env,
      MAX_UPLOAD_BYTES: String(4 * 1024 ** 3),
      UPLOAD_TIMEOUT_S: "7200",
      JOB_TIMEOUT_S: "14400",
      FILE_TTL_S: "86400",
    },
  });
  try {
    const { key, accountId } = await svc.newKey({ mode: "test" });
    await svc.admin("account:set", "--account", accountId, "--pages-per-job", String(pages));
    const call = client(svc.baseUrl, key);
    const [apiPid] = await rolePids(svc, "api");
    let workerPid = await freshWorker(svc);
    if (!apiPid) throw new Error("no api process");
    await Bun.sleep(2000);

    // Multipart upload, streamed through the API into the store.
    let idle = memOf(apiPid).rssMb;
    resetPeak(apiPid);
    let t = performance.now();
    const up = await streamUpload(svc.baseUrl, key, pdf, "large.pdf");
    const uploadS = (performance.now() - t) / 1000;
    if (up.status !== 201) throw new Error(`upload answered ${up.status}: ${JSON.stringify(up.json)}`);
    if (up.json.page_count !== pages) throw new Error(`page_count ${up.json.page_count}, expected ${pages}`);
    steps.push({
      step: "upload (multipart, streamed)",
      process: "api",
      idleMb: idle,
      peakMb: memOf(apiPid).hwmMb,
      seconds: uploadS,
      bytes: size,
    });
    // The inspector started with this upload: its whole life is the identification.
    const [inspectorPid] = await childPids(apiPid, "roles/inspector.ts");
    if (inspectorPid)
      steps.push({
        step: "page count (identify)",
        process: "inspector",
        idleMb: Number.NaN,
        peakMb: memOf(inspectorPid).hwmMb,
        seconds: Number.NaN,
        pages,
      });
    const fileId = up.json.id as string;

    // Presigned: the client PUTs to the store, then complete copies it to scratch and identifies it.
    const pre = await call("POST", "/files", {
      filename: "large.pdf",
      content_type: "application/pdf",
      size_bytes: size,
    });
    if (pre.status !== 201) throw new Error(`presign answered ${pre.status}: ${pre.text}`);
    // The store (Garage) has been seen to stop reading a PUT of this size for good: a stalled
    // attempt is abandoned after 10 minutes and sent again, once.
    let put: Response | null = null;
    for (let attempt = 0; attempt < 2 && !put?.ok; attempt++) {
      put = await fetch(pre.json.upload.url, {
        method: "PUT",
        body: Bun.file(pdf),
        signal: AbortSignal.timeout(600_000),
      }).catch((e) => {
        console.error(`large: PUT to the store: ${e}`);
        return null;
      });
    }
    if (!put?.ok) throw new Error(`PUT to the store answered ${put?.status ?? "nothing"}`);
    idle = memOf(apiPid).rssMb;
    resetPeak(apiPid);
    const inspIdle = inspectorPid ? memOf(inspectorPid).rssMb : Number.NaN;
    if (inspectorPid) resetPeak(inspectorPid);
    t = performance.now();
    const done = await call("POST", `/files/${pre.json.id}/complete`);
    const completeS = (performance.now() - t) / 1000;
    if (done.status !== 200) throw new Error(`complete answered ${done.status}: ${done.text}`);
    steps.push({
      step: "presigned complete (copy from the store, identify)",
      process: "api",
      idleMb: idle,
      peakMb: memOf(apiPid).hwmMb,
      seconds: completeS,
      bytes: size,
    });
    if (inspectorPid)
      steps.push({
        step: "page count in complete (identify)",
        process: "inspector",
        idleMb: inspIdle,
        peakMb: memOf(inspectorPid).hwmMb,
        seconds: Number.NaN,
        pages,
      });

    const range = Array.from({ length: ocrPages }, (_, i) => i);
    const ops: { step: string; body: Record<string, unknown>; pages: number }[] = [
      { step: "rotate 90°", body: { operation: "rotate", options: { degrees: 90 } }, pages },
      { step: "split every_page (ZIP)", body: { operation: "split", options: { mode: "every_page" } }, pages },
      { step: "compress balanced", body: { operation: "compress", options: { level: "balanced" } }, pages },
      { step: "convert pdf -> jpg 150 dpi (ZIP)", body: { operation: "convert", options: { target: "jpg" } }, pages },
      {
        step: `ocr blocks, pages 1-${ocrPages}`,
        body: { operation: "ocr", options: { output: "blocks", pages: range } },
        pages: ocrPages,
      },
      {
        step: `ocr searchable_pdf, pages 1-${ocrPages}`,
        body: { operation: "ocr", options: { output: "searchable_pdf", pages: range } },
        pages: ocrPages,
      },
    ];
    let rotateJob: string | null = null;
    let blocksJob: string | null = null;
    for (const [i, op] of ops.entries()) {
      if (i > 0) workerPid = await freshWorker(svc, workerPid);
      const idleW = memOf(workerPid).rssMb;
      resetPeak(workerPid);
      const job = await createJob(svc, key, { ...op.body, file_id: fileId });
      const fin = await finishedJob(svc, key, job.id, 6 * 3600_000);
      const peak = memOf(workerPid).hwmMb;
      if (fin.status !== "succeeded") throw new Error(`${op.step}: ${fin.status} ${JSON.stringify(fin.error)}`);
      const [row] = await svc.sql`
        SELECT extract(epoch FROM finished_at - started_at)::float8 AS s, tasks_total, result FROM jobs WHERE id = ${job.id}`;
      const bytes = row!.result?.bytes ?? Buffer.byteLength(JSON.stringify(row!.result?.json ?? null));
      steps.push({
        step: op.step,
        process: "worker",
        idleMb: idleW,
        peakMb: peak,
        seconds: row!.s,
        bytes,
        pages: op.pages,
        detail: row!.tasks_total ? `${row!.tasks_total} tasks` : "whole",
      });
      if (op.body.operation === "rotate") rotateJob = job.id;
      if ((op.body.options as { output?: string }).output === "blocks") blocksJob = job.id;
      console.error(`large: ${op.step}: ${f2(row!.s)} s, worker peak ${mb(peak)} MB`);
    }

    // A 2 GB result streamed out through the API.
    if (rotateJob) {
      idle = memOf(apiPid).rssMb;
      resetPeak(apiPid);
      t = performance.now();
      const res = await fetch(`${svc.baseUrl}/jobs/${rotateJob}/result`, {
        headers: { authorization: `Bearer ${key}` },
      });
      let n = 0;
      for await (const chunk of res.body as ReadableStream<Uint8Array>) n += chunk.length;
      steps.push({
        step: "download the rotated PDF (streamed)",
        process: "api",
        idleMb: idle,
        peakMb: memOf(apiPid).hwmMb,
        seconds: (performance.now() - t) / 1000,
        bytes: n,
      });
    }

    // The assembly of an OCR blocks job over the whole document (its OCR would take hours here):
    // the pages read above, repeated to every page, in the tasks 30 workers would make.
    if (blocksJob) {
      const res = await fetch(`${svc.baseUrl}/jobs/${blocksJob}/result?format=json`, {
        headers: { authorization: `Bearer ${key}` },
      });
      const source = join(dir, "blocks.json");
      await Bun.write(source, await res.text());
      const tasks = Math.floor(pages / Math.max(4, Math.ceil(pages / (4 * 30)), Math.ceil(pages / 256)));
      const child = Bun.spawn(
        ["bun", join(import.meta.dir, "large-assemble-child.ts"), source, String(pages), String(tasks)],
        { stdout: "pipe", stderr: "inherit" },
      );
      const out = JSON.parse(await new Response(child.stdout).text());
      await child.exited;
      steps.push({
        step: `ocr blocks assembly of ${pages} pages (${tasks} partials, the pages read above repeated)`,
        process: "worker",
        idleMb: out.idleMb,
        peakMb: out.peakMb,
        seconds: out.ms / 1000,
        bytes: out.bytes,
        pages,
        detail: "assembly only",
      });
      rmSync(source, { force: true });
    }
  } finally {
    await svc.stop();
    await garage.stop();
  }
  const loadAfter = load1();

  const cell = (n: number) => (Number.isNaN(n) ? "—" : String(mb(n)));
  const markdown = [
    `A generated scanned PDF (\`crates/engine/examples/large_pdf.rs\`): ${pages} pages, ${gb(size)} GB, every page its own 300-dpi greyscale JPEG with lines of text. One service on Garage (S3) with one worker process; the account's page limit raised with \`account:set --pages-per-job\`, \`MAX_UPLOAD_BYTES\` 4 GiB. Peak = the process's VmHWM over that step alone (reset before it); idle = its resident size just before. Load (1 min) before ${loadBefore.toFixed(2)}, after ${loadAfter.toFixed(2)}${loadBefore > 1 || loadAfter > 1 ? " — **run beside other work: the times are indicative only** (memory is not affected)" : ""}.`,
    "",
    "| step | process | pages | idle (MB) | peak (MB) | time (s) | bytes | run |",
    "|---|---|---|---|---|---|---|---|",
    ...steps.map(
      (s) =>
        `| ${s.step} | ${s.process} | ${s.pages ?? "—"} | ${cell(s.idleMb)} | **${cell(s.peakMb)}** | ${Number.isNaN(s.seconds) ? "—" : f2(s.seconds)} | ${s.bytes === undefined ? "—" : s.bytes >= 1e8 ? `${gb(s.bytes)} GB` : `${(s.bytes / 1e6).toFixed(1)} MB`} | ${s.detail ?? "—"} |`,
    ),
  ].join("\n");
  return {
    title: "Large documents",
    markdown,
    json: { pages, bytes: size, ocr_pages: ocrPages, steps, load_before: loadBefore, load_after: loadAfter },
  };
}
