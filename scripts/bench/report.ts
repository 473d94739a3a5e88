// bench/report.json is the report; bench/REPORT.md is rendered from it and never edited by hand
// (test/unit/bench-report.test.ts checks that the committed REPORT.md is exactly the rendering
// of the committed report.json). `bun scripts/bench/report.ts` renders it again.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type CodeVersion, type Machine, machineLabel } from "./machine";

export interface SectionRun {
  /** The suite's name: `bun run bench <suite>` runs it again. */
  suite: string;
  title: string;
  machine: Machine;
  code: CodeVersion;
  started_at: string;
  finished_at: string;
  quick: boolean;
  full: boolean;
  load_before: number;
  load_after: number;
  markdown: string;
  data: unknown;
}

export interface Report {
  schema: 2;
  /** Keyed by suite; a partial run (`bun run bench <suite>`) replaces its own sections only. */
  sections: Record<string, SectionRun>;
}

export const reportJsonPath = (root: string) => join(root, "bench/report.json");
export const reportMdPath = (root: string) => join(root, "bench/REPORT.md");

export function readReport(root: string): Report {
  const p = reportJsonPath(root);
  if (existsSync(p)) {
    const r = JSON.parse(readFileSync(p, "utf8"));
    if (r?.schema === 2) return r as Report;
  }
  return { schema: 2, sections: {} };
}

const minutes = (a: string, b: string) => ((Date.parse(b) - Date.parse(a)) / 60000).toFixed(1);

/** A load average over 0.5 per core before or after a suite: other work shared the machine. */
function loadNote(s: SectionRun): string {
  const busy = Math.max(s.load_before, s.load_after) > 0.5 * s.machine.cores;
  return `load ${s.load_before.toFixed(2)} -> ${s.load_after.toFixed(2)}${busy ? " (**machine shared with other work**)" : ""}`;
}

export function renderReport(r: Report): string {
  const runs = Object.values(r.sections).sort((a, b) => a.suite.localeCompare(b.suite));
  const machines = new Set(runs.map((s) => machineLabel(s.machine)));
  const commits = new Set(runs.map((s) => s.code.commit + (s.code.dirty ? "+" : "")));
  const out: string[] = [
    "# Benchmark report",
    "",
    "Generated from `bench/report.json` by `bun run bench` (never edited by hand). The timing rules every",
    "suite keeps are in [bench/README.md](README.md). Ratios are ours / theirs (below 1 = we are faster or smaller).",
    "",
  ];
  if (!runs.length) return [...out, "No suite has run yet.", ""].join("\n");
  out.push(
    machines.size === 1 && commits.size === 1
      ? `Every section ran on ${[...machines][0]}, commit ${[...commits][0]}.`
      : `**The sections come from ${machines.size} machine(s) and ${commits.size} commit(s)**: compare figures across sections with care.`,
    "",
    "| section | suite | machine | commit | started (UTC) | minutes | mode | load |",
    "|---|---|---|---|---|---|---|---|",
  );
  for (const s of runs) {
    const mode = s.quick ? "quick" : s.full ? "full" : "default";
    const commit = s.code.commit + (s.code.dirty ? " (uncommitted changes)" : "");
    out.push(
      `| [${s.title}](#${anchor(s.title)}) | \`${s.suite}\` | ${machineLabel(s.machine)} | ${commit} | ${s.started_at.slice(0, 16).replace("T", " ")} | ${minutes(s.started_at, s.finished_at)} | ${mode} | ${loadNote(s)} |`,
    );
  }
  out.push("");
  for (const s of runs)
    out.push(
      `## ${s.title}`,
      "",
      `\`bun run bench ${s.suite}\` · ${machineLabel(s.machine)} · commit ${s.code.commit} · ${s.started_at}`,
      "",
      s.markdown.trim(),
      "",
    );
  return out.join("\n");
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces as hyphens. */
export function anchor(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^\p{L}\p{N} -]/gu, "")
    .replace(/ /g, "-");
}

export function writeReport(root: string, r: Report): void {
  writeFileSync(reportJsonPath(root), `${JSON.stringify(r, null, 2)}\n`);
  writeFileSync(reportMdPath(root), renderReport(r));
}

if (import.meta.main) {
  const root = resolve(import.meta.dir, "../..");
  writeReport(root, readReport(root));
  console.log(`rendered ${reportMdPath(root)}`);
}
