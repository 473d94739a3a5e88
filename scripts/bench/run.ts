// `bun run bench [suite ...] [--quick] [--full]`: runs every scripts/bench/*.bench.ts suite (or
// those named) and records each in bench/report.json with the machine it ran on (CPU model,
// cores, instruction-set flags, memory), the commit, the time and the load; bench/REPORT.md is
// rendered from report.json (report.ts). A named run replaces only its own sections.
// `bun run bench latency --url ... --key ...` drives a running deployment instead (latency.ts).
// A suite exports `default async function (ctx): Promise<{ title, markdown, json }>` and keeps
// the timing rules of bench/README.md.
import { mkdirSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { corpusDir } from "../../test/support/corpus";
import { codeVersion, machine } from "./machine";
import { load1 } from "./pagework-lib";
import { readReport, renderReport, type SectionRun, writeReport } from "./report";

export interface BenchContext {
  root: string;
  corpusDir: string;
  /** Scratch directory for generated inputs and outputs (gitignored). */
  outDir: string;
  /** `--quick` (or BENCH_QUICK=1): small samples and fewer repetitions; the whole run stays under 15 minutes on 2 cores. */
  quick: boolean;
  /** `--full`: suites that sample a large set run all of it. */
  full: boolean;
  /** The command line after the suite names (suite-specific options). */
  args: string[];
}

export interface BenchSection {
  title: string;
  markdown: string;
  json: unknown;
}

const root = resolve(import.meta.dir, "../..");
const argv = process.argv.slice(2);

if (argv[0] === "latency") {
  const { main } = await import("./latency");
  const started = new Date();
  const loadBefore = load1();
  const code = await main(argv.slice(1), (s) => {
    const report = readReport(root);
    // The machine is the harness's host; the deployment it drove may be elsewhere (its URL is in the section).
    report.sections.latency = {
      suite: "latency",
      title: s.title,
      machine: machine(),
      code: codeVersion(root),
      started_at: started.toISOString(),
      finished_at: new Date().toISOString(),
      quick: false,
      full: false,
      load_before: loadBefore,
      load_after: load1(),
      markdown: s.markdown,
      data: s.json,
    };
    writeReport(root, report);
  });
  process.exit(code);
}

const ctx: BenchContext = {
  root,
  // One lookup order everywhere (CORPUS_DIR, <repo>/.corpus, ../shared/corpus): test/support/corpus.ts.
  corpusDir,
  outDir: join(root, "bench/out"),
  quick: argv.includes("--quick") || process.env.BENCH_QUICK === "1",
  full: argv.includes("--full"),
  args: argv.filter((a) => a.startsWith("--")),
};
mkdirSync(ctx.outDir, { recursive: true });

const available = readdirSync(import.meta.dir)
  .filter((f) => f.endsWith(".bench.ts"))
  .map((f) => f.replace(/\.bench\.ts$/, ""))
  .sort();
const wanted = argv.filter((a) => !a.startsWith("--"));
const unknown = wanted.filter((w) => !available.includes(w));
if (unknown.length) {
  console.error(`bench: no suite named ${unknown.join(", ")}; suites: ${available.join(", ")}, and latency`);
  process.exit(2);
}
const suites = wanted.length ? wanted : available;

const host = machine();
const code = codeVersion(root);
const report = readReport(root);
// A full run starts a new report: sections of an older run must not pass for this one's. The
// latency section drives a deployment (not a suite of this run) and is kept, labelled with its own run.
if (!wanted.length) report.sections = report.sections.latency ? { latency: report.sections.latency } : {};
for (const suite of suites) {
  const started = new Date();
  const loadBefore = load1();
  console.error(`bench: ${suite} ...`);
  const mod = await import(join(import.meta.dir, `${suite}.bench.ts`));
  const s = (await mod.default(ctx)) as BenchSection;
  const finished = new Date();
  console.error(`bench: ${suite} done in ${((finished.getTime() - started.getTime()) / 1000).toFixed(1)} s`);
  const run: SectionRun = {
    suite,
    title: s.title,
    machine: host,
    code,
    started_at: started.toISOString(),
    finished_at: finished.toISOString(),
    quick: ctx.quick,
    full: ctx.full,
    load_before: loadBefore,
    load_after: load1(),
    markdown: s.markdown,
    data: s.json,
  };
  report.sections[suite] = run;
  // Written after every suite, so an interrupted run keeps what finished.
  writeReport(root, report);
}
console.log(renderReport(report));
