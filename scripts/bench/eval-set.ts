// The evaluation sets nobody tunes on (bench/README-eval.md): the files of the committed manifest
// bench/eval-set.tsv, fetched by scripts/fetch-eval.sh. Each file's split was drawn once from the
// sha256 of its bytes ("report" when the first byte is >= 128) and is read from the manifest,
// never recomputed, so no file ever moves between halves.
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

export type EvalSplit = "tune" | "report";
export interface EvalFile {
  name: string;
  path: string;
  sha256: string;
  bytes: number;
  pages: number;
  source: string;
  licence: string;
  split: EvalSplit;
}

const root = resolve(import.meta.dir, "../..");
const manifestPath = join(root, "bench/eval-set.tsv");

/** EVAL_DIR or <repo>/bench/eval-data */
export const evalDir: string = process.env.EVAL_DIR || join(root, "bench/eval-data");

let cache: EvalFile[] | null = null;
function manifest(): EvalFile[] {
  if (cache) return cache;
  const [head, ...lines] = readFileSync(manifestPath, "utf8").trimEnd().split("\n");
  const cols = head!.split("\t");
  const col = (f: string[], k: string) => {
    const i = cols.indexOf(k);
    if (i < 0) throw new Error(`${manifestPath}: no column ${k}`);
    return f[i] ?? "";
  };
  cache = lines.map((line) => {
    const f = line.split("\t");
    const split = col(f, "split");
    if (split !== "tune" && split !== "report") throw new Error(`${manifestPath}: bad split ${split}`);
    const name = col(f, "name");
    return {
      name,
      path: join(evalDir, "pdf", name),
      sha256: col(f, "sha256"),
      bytes: Number(col(f, "bytes")),
      pages: Number(col(f, "pages")),
      source: col(f, "source"),
      licence: col(f, "licence"),
      split,
    };
  });
  return cache;
}

/** Present with the manifest's size (the sha256 is checked by scripts/fetch-eval.sh). */
const present = (f: EvalFile) => existsSync(f.path) && statSync(f.path).size === f.bytes;

/** The data is fetched (every manifest file present). */
export function hasEvalSet(): boolean {
  return manifest().every(present);
}

/** Files of the manifest (optionally one split), present on disk; throws Error("evaluation set missing: run scripts/fetch-eval.sh") if absent. */
export function evalFiles(opts?: { split?: EvalSplit | "all" }): EvalFile[] {
  if (!hasEvalSet()) throw new Error("evaluation set missing: run scripts/fetch-eval.sh");
  const split = opts?.split ?? "all";
  return manifest().filter((f) => split === "all" || f.split === split);
}

/** A fixed, hash-chosen sample of a split for quick runs: the n files of the split with the smallest sha256, among those with pages >= 1. */
export function evalSample(split: EvalSplit, n: number): EvalFile[] {
  return evalFiles({ split })
    .filter((f) => f.pages >= 1)
    .sort((a, b) => (a.sha256 < b.sha256 ? -1 : a.sha256 > b.sha256 ? 1 : 0))
    .slice(0, n);
}
