// Page-parallel jobs (issue 39; docs/scaling.md, "Page-parallel jobs"): the wall time of one OCR
// job (output blocks) of a scanned PDF (96 pages; --quick: 24) through the whole service, on
// three services started side by side on the test Postgres, each with its own database:
//   whole   FANOUT=0, one worker process: today's single-job path;
//   fan-1   FANOUT=1, one worker: the same job split into tasks, all run by that worker;
//   fan-2   FANOUT=1, two workers: the tasks spread over both.
// Every worker has one OCR thread (OCR_THREADS=1) and no machine-wide OCR lock
// (OCR_MACHINE_LOCK=0), as workers on separate hosts would. Each service first runs a 1-page job
// (models loaded: warm on every side), then the rounds alternate whole, fan-1, fan-2 with the
// other services idle (timing rule 5). The job's time is jobs.finished_at - jobs.started_at
// (first start to finish, the database clock), median of the rounds. Goals: fan-2 <= 0.55 x
// fan-1 (2 workers) and fan-1 <= 1.05 x whole (the machinery's overhead). The result is compared
// too: fan-1's and fan-2's blocks must equal whole's.
// Default: 96 pages, 2 rounds (about 15 minutes on 2 idle cores); --quick: 24 pages, 1 round.
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type Service, startService } from "../../test/support/service";
import { createJob, download, finishedJob, makePdf, uploadOk } from "../../test/support/jobs";
import { f2, load1, median } from "./pagework-lib";
import type { BenchContext, BenchSection } from "./run";

interface Config {
  name: "whole" | "fan-1" | "fan-2";
  fanout: boolean;
  workers: number;
}
const configs: Config[] = [
  { name: "whole", fanout: false, workers: 1 },
  { name: "fan-1", fanout: true, workers: 1 },
  { name: "fan-2", fanout: true, workers: 2 },
];

/** A scanned PDF of `pages` pages without a text layer (pages 1-3 and 5-6 of the corpus scan, repeated). */
function scannedPdf(ctx: BenchContext, dir: string, pages: number): string {
  const scan = "scanned-multipage-assembly.pdf";
  const sources: { file: string; range: string }[] = [];
  const cycle = ["1", "2", "3", "5", "6"];
  for (let i = 0; i < pages; i++) sources.push({ file: join(ctx.corpusDir, "files", scan), range: cycle[i % 5]! });
  return makePdf(dir, `scanned-${pages}.pdf`, sources);
}

export default async function (ctx: BenchContext): Promise<BenchSection> {
  const pages = ctx.quick ? 24 : 96;
  const rounds = ctx.quick ? 1 : 2;
  const dir = join(ctx.outDir, "fanout");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const pdf = scannedPdf(ctx, dir, pages);
  const loadBefore = load1();

  const services: { config: Config; svc: Service; key: string; fileId: string }[] = [];
  const times = new Map<string, number[]>(configs.map((c) => [c.name, []]));
  const tasks = new Map<string, number>();
  const results = new Map<string, unknown>();
  try {
    for (const config of configs) {
      const svc = await startService({
        workers: config.workers,
        env: { FANOUT: config.fanout ? "1" : "0", OCR_THREADS: "1", OCR_MACHINE_LOCK: "0" },
      });
      const { key } = await svc.newKey();
      const file = await uploadOk(svc, key, pdf);
      // Warm: the models load in every worker (1-page jobs side by side until each worker ran one).
      for (let tries = 0; tries < 10; tries++) {
        const warm = await Promise.all(
          Array.from({ length: config.workers }, () =>
            createJob(svc, key, { operation: "ocr", file_id: file.id, options: { pages: [0] } }),
          ),
        );
        for (const w of warm) await finishedJob(svc, key, w.id, 300_000);
        const [ran] = await svc.sql`SELECT count(DISTINCT worker_id)::int AS n FROM jobs WHERE status = 'succeeded'`;
        if (ran!.n >= config.workers) break;
      }
      services.push({ config, svc, key, fileId: file.id });
    }
    for (let r = 0; r < rounds; r++) {
      for (const s of services) {
        const job = await createJob(s.svc, s.key, {
          operation: "ocr",
          file_id: s.fileId,
          options: { output: "blocks" },
        });
        const done = await finishedJob(s.svc, s.key, job.id, 3_600_000);
        if (done.status !== "succeeded")
          throw new Error(`${s.config.name}: job ${done.status}: ${JSON.stringify(done.error)}`);
        const [row] = await s.svc.sql`
          SELECT extract(epoch FROM finished_at - started_at)::float8 AS s, tasks_total FROM jobs WHERE id = ${job.id}`;
        times.get(s.config.name)!.push(row!.s);
        tasks.set(s.config.name, row!.tasks_total ?? 0);
        if (r === 0) results.set(s.config.name, (await download(s.svc, s.key, job.id, "?format=json")).json);
      }
    }
  } finally {
    for (const s of services) await s.svc.stop();
    rmSync(dir, { recursive: true, force: true });
  }

  const med = (n: string) => median(times.get(n)!);
  const whole = med("whole");
  const fan1 = med("fan-1");
  const fan2 = med("fan-2");
  const same = ["fan-1", "fan-2"].every((n) => JSON.stringify(results.get(n)) === JSON.stringify(results.get("whole")));
  const twoWorkers = fan2 / fan1;
  const overhead = fan1 / whole;
  const loadAfter = load1();
  const markdown = [
    `One OCR job (output blocks) of a ${pages}-page scanned PDF through the service; one OCR thread per worker, no machine-wide OCR lock; job time = first start to finish (median of ${rounds} interleaved round(s), warm workers). Load (1 min) before ${loadBefore.toFixed(2)}, after ${loadAfter.toFixed(2)}${loadBefore > 0.5 || loadAfter > 0.5 ? " — **run beside other work: the ratios are indicative only**" : ""}.`,
    "",
    "| service | workers | tasks | job time (s) |",
    "|---|---|---|---|",
    ...configs.map(
      (c) =>
        `| ${c.name} (FANOUT=${c.fanout ? 1 : 0}) | ${c.workers} | ${tasks.get(c.name) || "— (whole)"} | ${f2(med(c.name))} |`,
    ),
    "",
    `- 2 workers / 1 worker (fan-2 / fan-1): **${f2(twoWorkers)}** (goal <= 0.55: ${twoWorkers <= 0.55 ? "met" : "not met"})`,
    `- task machinery overhead, 1 worker (fan-1 / whole): **${f2(overhead)}** (goal <= 1.05: ${overhead <= 1.05 ? "met" : "not met"})`,
    `- blocks of fan-1 and fan-2 equal whole's: ${same ? "yes" : "**no**"}`,
    '- not measured here: per-page latency p50/p95 through a deployment (`bun run bench latency`), peak RSS per worker on a 5,000-page document: `bun run bench large` (docs/scaling.md, "Large documents").',
  ].join("\n");
  return {
    title: "Page-parallel jobs (fan-out)",
    markdown,
    json: {
      pages,
      rounds,
      seconds: Object.fromEntries(times),
      tasks: Object.fromEntries(tasks),
      ratio_two_workers: twoWorkers,
      ratio_overhead: overhead,
      identical_blocks: same,
      load_before: loadBefore,
      load_after: loadAfter,
    },
  };
}
