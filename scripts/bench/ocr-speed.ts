// OCR speed, ours against Tesseract, by the timing rules of bench/README.md; shared by the ocr and
// ocr-eval suites (ocr-lang uses the process timing only).
//
// Processes and pages: both sides run P processes at once (P = the cores, which is also the
// service's default WORKERS), over the same pages with the same assignment of pages to the
// processes: a fixed split balanced by image size (pixels, largest first onto the lighter
// process), the same order within a process. Tesseract runs in its own multi-image mode (a
// text file listing the images: one process loads its model once and reads every page of its
// list, the text of consecutive pages separated by a form feed), so both sides load once per
// process. Tesseract gets OMP_THREAD_LIMIT=1 (how OCRmyPDF runs it on 2 cores); pages whose
// source is turned (manifest feature `rotated`) go to a second list-mode process of the same
// process slot with orientation detection (`--psm 1`), after the upright ones; ours reads the
// slot's pages in that same order in one process.
//
// Clock: every process is timed by this (parent) process from spawn to exit ("whole process":
// start, runtime and model load, every page, output written). Each process marks the start of
// every page on stderr: Tesseract prints "Page N : file" (after decoding page N's image, just
// before recognising it), ours prints `ocr-child: page N` (ocr-child.ts). Load = spawn to the
// first page mark; page N = its mark to the next mark, the last page to the exit; warm = exit
// minus the first mark (the process's work after load). Tesseract's first image decode thus
// falls in its load, not in its warm time (a few tens of ms, in its favour). CPU-seconds: the
// process's user + system time (wait4 rusage, which includes any children it waited for), and
// the same read from /proc/<pid>/stat (10 ms ticks) when the first page mark arrives, so warm
// CPU = total - that. Peak RSS: GNU time's %M of the process. Every process is started through
// /usr/bin/time because a child's own maxrss starts from its parent's: Linux keeps the memory
// high-water mark of the image it replaced at exec, and Bun spawns from this process, whose
// RSS (hundreds of MB once it holds a run's results) then showed as Tesseract's peak.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { config } from "../../src/config";
import { ocrThreads } from "../../src/worker/operations/ocr";
import type { Machine } from "./machine";

/** One process as timed from outside. */
export interface ProcTiming {
  wallMs: number;
  loadMs: number;
  pageMs: number[];
  cpuMs: number;
  loadCpuMs: number;
  maxRssKb: number;
}

export interface Timed extends ProcTiming {
  stdout: string;
  stderr: string;
  code: number;
}

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in 1/100 s. */
const TICK_MS = 10;
function procCpuMs(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(f[11]) + Number(f[12])) * TICK_MS;
  } catch {
    return NaN;
  }
}

/** The process /usr/bin/time started (its only child). */
function childOf(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/)[0]) || pid;
  } catch {
    return pid;
  }
}

/** Spawns `cmd` (through /usr/bin/time, for its peak RSS), timing it whole and by the page marks
 * `pageMark` finds on its stderr. Marks are stamped when their chunk arrives here. */
export async function timedProcess(
  cmd: string[],
  env: Record<string, string | undefined>,
  pageMark: RegExp,
): Promise<Timed> {
  const dir = mkdtempSync(join(tmpdir(), "ocr-bench-time-"));
  const timeOut = join(dir, "time");
  const t0 = performance.now();
  const p = Bun.spawn(["/usr/bin/time", "-o", timeOut, "-f", "%M", ...cmd], {
    env: env as Record<string, string>,
    stdout: "pipe",
    stderr: "pipe",
  });
  const marks: number[] = [];
  let loadCpuMs = NaN;
  let stderr = "";
  const readErr = (async () => {
    const dec = new TextDecoder();
    let pending = "";
    for await (const chunk of p.stderr) {
      const at = performance.now() - t0;
      const s = dec.decode(chunk, { stream: true });
      stderr += s;
      pending += s;
      const lines = pending.split("\n");
      pending = lines.pop()!;
      for (const l of lines) {
        if (!pageMark.test(l)) continue;
        if (!marks.length) loadCpuMs = procCpuMs(childOf(p.pid));
        marks.push(at);
      }
    }
  })();
  const [stdout, end] = await Promise.all([
    new Response(p.stdout).text(),
    p.exited.then(() => performance.now() - t0),
    readErr,
  ]);
  const ru = p.resourceUsage();
  // /usr/bin/time's own CPU (a few ms) counts in; its exit code is the command's.
  const cpuMs = ru ? Number(ru.cpuTime.user + ru.cpuTime.system) / 1000 : NaN;
  const maxRssKb = Number(readFileSync(timeOut, "utf8").trim().split("\n").at(-1));
  rmSync(dir, { recursive: true, force: true });
  const pageMs = marks.map((m, i) => (marks[i + 1] ?? end) - m);
  return {
    wallMs: end,
    loadMs: marks[0] ?? end,
    pageMs,
    cpuMs,
    loadCpuMs: marks.length ? loadCpuMs : cpuMs,
    maxRssKb,
    stdout,
    stderr,
    code: p.exitCode ?? -1,
  };
}

/** Width x height of a PNG or JPEG (file size for anything else): the weight of a page. */
export function imagePixels(path: string): number {
  const b = readFileSync(path);
  if (b.subarray(1, 4).toString("latin1") === "PNG") return b.readUInt32BE(16) * b.readUInt32BE(20);
  if (b[0] === 0xff && b[1] === 0xd8) {
    let i = 2;
    while (i + 9 < b.length && b[i] === 0xff) {
      const m = b[i + 1]!;
      if (m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc)
        return b.readUInt16BE(i + 5) * b.readUInt16BE(i + 7);
      i += 2 + b.readUInt16BE(i + 2);
    }
  }
  return statSync(path).size;
}

export interface SpeedPage {
  file: string;
  /** A turned page: Tesseract reads it with orientation detection (`--psm 1`). */
  turned: boolean;
}

/** `processes` lists of pages, balanced by pixels (largest first onto the lightest list); in
 * each list the upright pages first, then the turned ones, each in their given order. */
export function balancedSplit(pages: SpeedPage[], processes: number): SpeedPage[][] {
  const load = new Array<number>(processes).fill(0);
  const slot = new Map<SpeedPage, number>();
  for (const p of [...pages].map((p) => ({ p, w: imagePixels(p.file) })).sort((a, b) => b.w - a.w)) {
    const k = load.indexOf(Math.min(...load));
    slot.set(p.p, k);
    load[k]! += p.w;
  }
  return load.map((_, k) => {
    const mine = pages.filter((p) => slot.get(p) === k);
    return [...mine.filter((p) => !p.turned), ...mine.filter((p) => p.turned)];
  });
}

/** A process slot's timing: its processes one after another (Tesseract's upright list, then its
 * turned list). */
export interface SlotTiming extends ProcTiming {
  processes: number;
}

function slotOf(runs: ProcTiming[]): SlotTiming {
  const sum = (k: "wallMs" | "loadMs" | "cpuMs" | "loadCpuMs") => runs.reduce((a, r) => a + r[k], 0);
  return {
    wallMs: sum("wallMs"),
    loadMs: sum("loadMs"),
    pageMs: runs.flatMap((r) => r.pageMs),
    cpuMs: sum("cpuMs"),
    loadCpuMs: sum("loadCpuMs"),
    maxRssKb: Math.max(...runs.map((r) => r.maxRssKb)),
    processes: runs.length,
  };
}

/** One run of one side: every slot at once. */
export interface PairRun {
  /** Spawn of the first process to the exit of the last. */
  wallMs: number;
  slots: SlotTiming[];
  /** Text of every page, by file. */
  texts: Map<string, string>;
  /** Ours: the children's JSON results (engine, runtime, initMs, per-file results). */
  children?: any[];
}

/** How our processes run: the worker's settings, or a labelled variant. */
export interface OursConfig {
  key: string;
  label: string;
  threads: number;
  /** The model-run lock file shared by the processes of a run (the worker's machine lock). */
  machineLock?: string;
  /** Environment changes (OCR_OPENVINO); undefined deletes a variable. */
  env: Record<string, string | undefined>;
}

/** What the service runs by default (src/config.ts, src/worker/operations/ocr.ts): WORKERS =
 * the cores, each with ocrThreads() intra-op threads, every model run under the machine-wide
 * lock unless OCR_MACHINE_LOCK=0, OpenVINO where the CPU has bfloat16 (OCR_OPENVINO unset). The bench's
 * lock file is its own (bench/out), so that a service running on the machine does not share it. */
export function workerConfig(
  outDir: string,
  key = "worker",
  label = "worker settings",
  env: Record<string, string | undefined> = { OCR_OPENVINO: undefined },
): OursConfig {
  return {
    key,
    label,
    threads: ocrThreads(),
    machineLock: config.ocrMachineLock ? join(outDir, "ocr-machine.lock") : undefined,
    env,
  };
}

/** The worker settings on the engine this CPU does not run by default: ONNX Runtime's kernels
 * where the CPU has bfloat16 (OCR_OPENVINO=0), OpenVINO in float32 where it has not
 * (OCR_OPENVINO=1), so that the report shows what the default choice wins or loses. */
export function otherEngineConfig(outDir: string, m: Machine): OursConfig {
  const v = m.bf16 ? "0" : "1";
  return workerConfig(outDir, "worker-other", `worker settings, OCR_OPENVINO=${v}`, { OCR_OPENVINO: v });
}

/** Processes per side: the cores (the service's default WORKERS). */
export const speedProcesses = () => availableParallelism();

export function describeConfig(c: OursConfig): string {
  return `${c.threads} intra-op thread${c.threads === 1 ? "" : "s"} per process${c.machineLock ? ", model runs under the machine-wide lock" : ", no lock"}`;
}

function envWith(changes: Record<string, string | undefined>): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** Ours: one child process (ocr-child.ts) per slot, all at once. */
export async function runOurs(
  root: string,
  slots: SpeedPage[][],
  c: OursConfig,
  job: {
    output?: "blocks" | "searchable_pdf";
    withPages?: boolean;
    keepDir?: string;
    languages?: (string[] | null)[][];
  } = {},
): Promise<PairRun> {
  const t0 = performance.now();
  const env = envWith(c.env);
  const runs = await Promise.all(
    slots.map(async (pages, k) => {
      const spec = {
        threads: c.threads,
        machineLock: c.machineLock,
        output: job.output ?? "blocks",
        files: pages.map((p) => p.file),
        withPages: job.withPages,
        keepDir: job.keepDir,
        languages: job.languages?.[k],
      };
      const r = await timedProcess(
        ["bun", join(root, "scripts/bench/ocr-child.ts"), JSON.stringify(spec)],
        env,
        /^ocr-child: page \d+$/,
      );
      if (r.code !== 0) throw new Error(`ocr child failed (${r.code}): ${r.stderr.slice(-2000)}`);
      return { r, child: JSON.parse(r.stdout.trim().split("\n").at(-1)!) };
    }),
  );
  const wallMs = performance.now() - t0;
  const texts = new Map<string, string>();
  for (const { child } of runs) for (const res of child.results) texts.set(res.file, res.text);
  return { wallMs, slots: runs.map(({ r }) => slotOf([r])), texts, children: runs.map((x) => x.child) };
}

/** Tesseract in list mode on `pages` (one process), `-l lang`, `threads` OpenMP threads. */
export async function tesseractList(
  pages: string[],
  lang: string,
  threads: number,
  listFile: string,
  extra: string[] = [],
): Promise<Timed & { texts: string[] }> {
  writeFileSync(listFile, pages.join("\n") + "\n");
  const r = await timedProcess(
    ["tesseract", listFile, "stdout", "-l", lang, ...extra],
    { ...process.env, OMP_THREAD_LIMIT: String(threads) },
    /^Page \d+ : /,
  );
  if (r.code !== 0) throw new Error(`tesseract ${listFile} failed (${r.code}): ${r.stderr.slice(-2000)}`);
  const texts = r.stdout.split("\f");
  if (texts.length !== pages.length || r.pageMs.length !== pages.length)
    throw new Error(
      `tesseract ${listFile}: ${texts.length} texts and ${r.pageMs.length} page marks for ${pages.length} pages`,
    );
  return { ...r, texts };
}

/** Tesseract: one slot per process slot, all at once; in a slot, the upright pages' list, then
 * the turned pages' list with `--psm 1`. */
export async function runTesseract(outDir: string, slots: SpeedPage[][], lang = "eng"): Promise<PairRun> {
  const t0 = performance.now();
  const runs = await Promise.all(
    slots.map(async (pages, k) => {
      const procs: (Timed & { texts: string[]; files: string[] })[] = [];
      for (const turned of [false, true]) {
        const files = pages.filter((p) => p.turned === turned).map((p) => p.file);
        if (!files.length) continue;
        const r = await tesseractList(
          files,
          lang,
          1,
          join(outDir, `tesseract-list-${process.pid}-${k}-${turned ? "osd" : "plain"}.txt`),
          turned ? ["--psm", "1"] : [],
        );
        procs.push({ ...r, files });
      }
      return procs;
    }),
  );
  const wallMs = performance.now() - t0;
  const texts = new Map<string, string>();
  for (const procs of runs) for (const p of procs) p.files.forEach((f, i) => texts.set(f, p.texts[i]!));
  return { wallMs, slots: runs.map((procs) => slotOf(procs)), texts };
}

/** Runs `sides` in `rounds` rounds, alternating their order (forwards, then backwards), so that
 * drift in the machine's speed falls on every side alike. */
export async function interleaved(
  rounds: number,
  sides: { key: string; run: () => Promise<PairRun> }[],
): Promise<Record<string, PairRun[]>> {
  const out: Record<string, PairRun[]> = Object.fromEntries(sides.map((s) => [s.key, []]));
  for (let r = 0; r < rounds; r++) {
    for (const s of r % 2 ? [...sides].reverse() : sides) {
      console.error(`bench:   round ${r + 1}/${rounds}: ${s.key}`);
      out[s.key]!.push(await s.run());
    }
  }
  return out;
}

/** Means over the rounds of one side. */
export interface SideStats {
  rounds: number;
  pages: number;
  /** Whole process: mean wall of the run (all slots at once) and pages/s from it. */
  wholeMs: number;
  wholePps: number;
  /** Warm: per run, the longest slot's work after load; mean over the rounds; pages/s. */
  warmMs: number;
  warmPps: number;
  /** Mean time of a page after load (every page of every round). */
  pageMeanMs: number;
  /** Mean load per process (spawn to its first page). */
  loadMeanMs: number;
  /** CPU-seconds of all processes of a run (mean over the rounds), whole and after load. */
  cpuWholeMs: number;
  cpuWarmMs: number;
  maxRssKb: number;
  perRoundWholeMs: number[];
}

const meanOf = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

export function stats(runs: PairRun[], pages: number): SideStats {
  const whole = runs.map((r) => r.wallMs);
  const warm = runs.map((r) => Math.max(...r.slots.map((s) => s.wallMs - s.loadMs)));
  const procLoads = runs.flatMap((r) => r.slots.map((s) => s.loadMs / s.processes));
  return {
    rounds: runs.length,
    pages,
    wholeMs: meanOf(whole),
    wholePps: pages / (meanOf(whole) / 1000),
    warmMs: meanOf(warm),
    warmPps: pages / (meanOf(warm) / 1000),
    pageMeanMs: meanOf(runs.flatMap((r) => r.slots.flatMap((s) => s.pageMs))),
    loadMeanMs: meanOf(procLoads),
    cpuWholeMs: meanOf(runs.map((r) => r.slots.reduce((a, s) => a + s.cpuMs, 0))),
    cpuWarmMs: meanOf(runs.map((r) => r.slots.reduce((a, s) => a + s.cpuMs - s.loadCpuMs, 0))),
    maxRssKb: Math.max(...runs.flatMap((r) => r.slots.map((s) => s.maxRssKb))),
    perRoundWholeMs: whole,
  };
}

/** What a run of ours computed in: the runtime its children loaded and the precision that runtime
 * uses on this CPU. */
export function pathOf(
  run: PairRun,
  m: Machine,
): { runtime: string; precision: "float32" | "bfloat16"; label: string } {
  const runtime = run.children?.[0]?.runtime ?? "unknown";
  const precision = runtime === "openvino" && m.bf16 ? "bfloat16" : "float32";
  const label =
    runtime === "openvino"
      ? `OpenVINO, ${precision}`
      : runtime === "onnxruntime"
        ? "ONNX Runtime CPU kernels, float32"
        : runtime;
  return { runtime, precision, label };
}

const s2 = (ms: number) => (ms / 1000).toFixed(2);

/** The speed table: one row per side; ratios of ours' pages/s to Tesseract's. */
export function speedTable(rows: { label: string; s: SideStats; tesseract?: SideStats }[]): string[] {
  const ratio = (a: number, b?: number) => (b ? `${(a / b).toFixed(2)}x` : "");
  return [
    "| side | whole: wall s | whole: pages/s | whole: x Tesseract | whole: CPU s | warm: wall s | warm: pages/s | warm: x Tesseract | warm: CPU s | s per page (warm) | load s per process | peak RSS MB |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...rows.map(
      ({ label, s, tesseract: t }) =>
        `| ${label} | ${s2(s.wholeMs)} | ${s.wholePps.toFixed(2)} | ${ratio(s.wholePps, t?.wholePps)} | ${s2(s.cpuWholeMs)} | ${s2(s.warmMs)} | ${s.warmPps.toFixed(2)} | ${ratio(s.warmPps, t?.warmPps)} | ${s2(s.cpuWarmMs)} | ${s2(s.pageMeanMs)} | ${s2(s.loadMeanMs)} | ${(s.maxRssKb / 1024).toFixed(0)} |`,
    ),
  ];
}

/** The rules the speed figures kept, said once under the table. */
export function speedMethod(processes: number, worker: OursConfig, rounds: number): string {
  return `Both sides: ${processes} processes at once over the same pages, split between the processes by image size (the same split and order on both sides); Tesseract 5 in its multi-image mode (\`tesseract LIST stdout -l eng\`, OMP_THREAD_LIMIT=1: one process loads once and reads its whole list; turned pages in a second list with \`--psm 1\`), ours one \`ocr-child.ts\` process per list. The worker settings are the service's defaults (src/config.ts: WORKERS = cores, ${describeConfig(worker)}); under the lock one model run at a time uses the threads, so ours, like Tesseract, keeps ${processes} cores busy (CPU s shows what each side used). **Whole** = spawn of the processes to the exit of the last (start, model load, every page, output written), pages/s from its mean. **Warm** = each process's time after its load (its first page's start to its exit), the longer process of a run; the load is the spawn to the first page (ours: Bun, the addon, the models; Tesseract: its traineddata), per process. Means over ${rounds} interleaved round${rounds === 1 ? "" : "s"} (the sides in turn, the order reversed every other round); every ratio here is ours' pages/s over Tesseract's from the same rounds (above 1: ours faster).`;
}

/** A line of a suite's Goals list: met, missed or not measured, with the figure. */
export function goalLine(goal: string, met: boolean | null, figure: string): string {
  return `- ${met === null ? "**not measured**" : met ? "**met**" : "**missed**"}: ${goal} — ${figure}`;
}

/** Goal lines for the speed goals of issues 6, 18 and 40, from one run's figures. `float32` is
 * the side that computed in float32 (on a CPU without bfloat16: the worker settings' default),
 * `bf16` the one that computed in bfloat16, null when this CPU cannot. */
export function speedGoals(
  m: Machine,
  t: SideStats,
  float32: { label: string; s: SideStats },
  bf16: { label: string; s: SideStats } | null,
  set: string,
): string[] {
  const x = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
  const both = (s: SideStats, min: number) => ({
    whole: s.wholePps / t.wholePps >= min,
    warm: s.warmPps / t.warmPps >= min,
  });
  const fig = (s: SideStats) =>
    `whole process ${x(s.wholePps, t.wholePps)} (${s.wholePps.toFixed(2)} vs ${t.wholePps.toFixed(2)} pages/s), warm ${x(s.warmPps, t.warmPps)} (${s.warmPps.toFixed(2)} vs ${t.warmPps.toFixed(2)} pages/s)`;
  const lines: string[] = [];
  for (const [name, min] of [
    ["issue 18 floor: pages/s >= 1.5x Tesseract's", 1.5],
    ["issue 18 goal: pages/s >= 2x Tesseract's", 2],
    ["issue 6 (replaced by issue 18's 2x): pages/s >= 3x Tesseract's", 3],
  ] as const) {
    const b = both(float32.s, min);
    lines.push(
      goalLine(
        `${name}, ${set}, float32 path (${float32.label}), both whole process and warm`,
        b.whole && b.warm,
        `${fig(float32.s)}${b.whole !== b.warm ? ` (${b.whole ? "whole met, warm missed" : "warm met, whole missed"})` : ""}`,
      ),
    );
  }
  const avx2 = m.flags.includes("avx2");
  const b40 = both(float32.s, 1.5);
  lines.push(
    goalLine(
      `issue 40: pages/s >= 1.5x Tesseract's on an AVX2 CPU without bfloat16, in float32, ${set}`,
      avx2 ? b40.whole && b40.warm : null,
      avx2
        ? `${fig(float32.s)}${b40.whole !== b40.warm ? ` (${b40.whole ? "whole met, warm missed" : "warm met, whole missed"})` : ""} (${float32.label}; this CPU: ${m.flags.join(" ")}${m.bf16 ? ", which has bfloat16: the float32 figure is ONNX Runtime's kernels (OCR_OPENVINO=0)" : ", no bfloat16"})`
        : "this CPU has no AVX2",
    ),
  );
  lines.push(
    bf16
      ? goalLine(
          `bfloat16 path (${bf16.label}) against issue 18's 2x, ${set}`,
          both(bf16.s, 2).whole && both(bf16.s, 2).warm,
          fig(bf16.s),
        )
      : goalLine(
          `bfloat16 path against issue 18's 2x, ${set}`,
          null,
          "bfloat16 path: not measured on this CPU (no avx512_bf16/amx)",
        ),
  );
  return lines;
}
