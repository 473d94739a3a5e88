// Tuning aid for the reading order (issue 18 item 2): re-orders the lines our OCR found in the last
// `bun run bench ocr-eval` run (bench/out/ocr-eval-run.json) with the current crates/ocr layout
// (example layout_replay), and prints CER before/after per class, for the tune split only unless
// `--report` or `--all` is given (`--run=FILE`: another run file of the same shape). Pages read after a rotation keep their text (their boxes are
// given on the page as displayed, not upright). Not a benchmark: the bench re-runs the OCR.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { scoreRow, summary, type Row } from "./ocr-eval.bench";

const root = resolve(import.meta.dir, "../..");
const which = process.argv.includes("--all") ? null : process.argv.includes("--report") ? "report" : "tune";
const runFile = process.argv.find((a) => a.startsWith("--run="))?.slice(6) ?? join(root, "bench/out/ocr-eval-run.json");
const run = JSON.parse(readFileSync(runFile, "utf8")) as any[];
const pages = run.filter((p) => which === null || p.split === which);
const upright = (p: any) => p.ours.every((pg: any) => (pg.text_rotation ?? 0) === 0);
const input = pages.map((p) =>
  upright(p)
    ? p.ours.flatMap((pg: any) => pg.blocks.flatMap((b: any) => b.lines.map((l: any) => [...l.bbox, l.text])))
    : [],
);
const r = spawnSync("cargo", ["run", "-q", "--release", "-p", "ocr", "--example", "layout_replay"], {
  cwd: root,
  input: JSON.stringify(input),
  encoding: "utf8",
  maxBuffer: 256 << 20,
});
if (r.status !== 0) throw new Error(r.stderr);
const texts = JSON.parse(r.stdout) as string[];
const before: Row[] = pages.map((p) => p.row);
const after: Row[] = pages.map((p, i) =>
  scoreRow(
    { ...p, reference: p.reference } as any,
    upright(p) ? texts[i]! : p.ours.map((pg: any) => pg.text).join("\n\n"),
    p.tesseract,
  ),
);
console.log(
  `${which ?? "all"} split, ${pages.length} images\nBEFORE (as run)\n${summary(before, (x) => x.cls, "class").join("\n")}\nAFTER (current layout)\n${summary(after, (x) => x.cls, "class").join("\n")}`,
);
for (const [i, a] of after.entries()) {
  const b = before[i]!;
  if (Math.abs(a.ours.cer - b.ours.cer) > 0.001)
    console.log(
      `${a.name}: ${(b.ours.cer * 100).toFixed(1)}% -> ${(a.ours.cer * 100).toFixed(1)}% (Tesseract ${(a.tesseract.cer * 100).toFixed(1)}%)`,
    );
}
console.log(
  `misses after: ${after
    .filter((x) => x.miss)
    .map((x) => `${x.name} ${(x.ours.cer * 100).toFixed(1)}/${(x.tesseract.cer * 100).toFixed(1)}`)
    .join(", ")}`,
);
