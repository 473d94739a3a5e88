// Generates bench/eval-set.tsv, the manifest of the evaluation sets nobody tunes on
// (bench/README.md, "Evaluation sets"), once: it refuses to run when the manifest exists, so the split drawn here
// is never drawn again (`--force` exists only for a manifest that was never committed).
//
//   EVAL_MIRROR=DIR bun scripts/bench/eval-manifest.ts [--force] [--corpus DIR]
//
// Every PDF of the pinned sdists of scripts/fetch-eval.sh (its --raw mode), in name order, minus
// - files with the same bytes as a corpus file (the corpus is what the project was tuned on),
// - files with a page that is a corpus page: the same rendering (grey 48x64 thumbnails differing by
//   under a tenth of their ink on average) or the same text (40 or more non-blank characters),
// - files with the same bytes as a file earlier by name.
// Split: "report" when the first byte of sha256(file bytes) is >= 128, else "tune".
// Prints the files left out, for the comment at the top of scripts/fetch-eval.sh.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";

const root = resolve(import.meta.dir, "../..");
const out = join(root, "bench/eval-set.tsv");
const arg = (k: string) => {
  const i = process.argv.indexOf(k);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const corpusDir = arg("--corpus") ?? process.env.CORPUS_DIR ?? resolve(root, "../shared/corpus");
if (existsSync(out) && !process.argv.includes("--force")) {
  console.error(`${out} exists: the split is drawn once and never again (bench/README.md, "Evaluation sets")`);
  process.exit(1);
}

const raw = mkdtempSync(join(tmpdir(), "eval-raw-"));
const fetched = spawnSync(join(root, "scripts/fetch-eval.sh"), ["--raw", raw], { stdio: "inherit" });
if (fetched.status !== 0) throw new Error("fetch-eval.sh --raw failed");

const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const walk = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
  );

/** Page count by pdfinfo, or 0 and pdfinfo's first error line. */
function pdfPages(pdf: string): { pages: number; why: string } {
  const r = spawnSync("pdfinfo", [pdf], { encoding: "utf8", timeout: 60_000 });
  const pages = Number(/^Pages:\s+(\d+)/m.exec(r.stdout ?? "")?.[1] ?? 0);
  if (r.status === 0 && pages > 0) return { pages, why: "" };
  const err =
    (r.stderr ?? "")
      .split("\n")
      .filter((l) => /Error/.test(l))
      .at(-1) ?? (r.error ? "timed out" : "no pages");
  return { pages: 0, why: `pdfinfo fails (${err.trim()}): kept as a bad-input or password test` };
}

interface PageSig {
  ink: number;
  thumb: Uint8Array | null;
  text: string;
}

/** Grey 48x64 thumbnail and whitespace-free text of every page (empty when a tool fails). */
function pageSigs(pdf: string): PageSig[] {
  const dir = mkdtempSync(join(tmpdir(), "eval-thumb-"));
  try {
    spawnSync("pdftoppm", ["-q", "-gray", "-scale-to-x", "48", "-scale-to-y", "64", pdf, join(dir, "p")], {
      timeout: 300_000,
    });
    const thumbs = readdirSync(dir)
      .sort((a, b) => Number(/(\d+)\.pgm$/.exec(a)![1]) - Number(/(\d+)\.pgm$/.exec(b)![1]))
      .map((f) => {
        const b = readFileSync(join(dir, f));
        const h = /^P5\s+\d+\s+\d+\s+\d+\s/.exec(b.subarray(0, 32).toString("latin1"))!;
        return new Uint8Array(b.subarray(h[0].length));
      });
    const t = spawnSync("pdftotext", ["-q", pdf, "-"], { encoding: "utf8", timeout: 300_000, maxBuffer: 1 << 28 });
    const texts = (t.stdout ?? "").split("\f").map((s) => s.replace(/\s+/g, ""));
    const n = Math.max(thumbs.length, texts.length - 1);
    return Array.from({ length: n }, (_, i) => {
      const thumb = thumbs[i]?.length === 48 * 64 ? thumbs[i]! : null;
      const ink = thumb ? thumb.reduce((s, v) => s + 255 - v, 0) / thumb.length : 0;
      return { ink, thumb, text: texts[i] ?? "" };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** "page P renders as corpus F page Q" / "same text as ..." for the first page that is a corpus page. */
function corpusPage(sigs: PageSig[], corpus: { file: string; sigs: PageSig[] }[]): string | null {
  for (const [i, s] of sigs.entries()) {
    for (const c of corpus) {
      for (const [j, t] of c.sigs.entries()) {
        if (s.text.length >= 40 && s.text === t.text)
          return `page ${i + 1} has the same text as corpus ${c.file} page ${j + 1}`;
        if (!s.thumb || !t.thumb) continue;
        const ink = Math.max(s.ink, t.ink);
        // Blank pages look alike; a tenth of the ink keeps two different pages of text apart.
        if (ink <= 2 || Math.abs(s.ink - t.ink) > 0.1 * ink) continue;
        let d = 0;
        for (let k = 0; k < s.thumb.length; k++) d += Math.abs(s.thumb[k]! - t.thumb[k]!);
        if (d / s.thumb.length < 0.1 * ink) return `page ${i + 1} renders as corpus ${c.file} page ${j + 1}`;
      }
    }
  }
  return null;
}

/** Licence of a file of the pikepdf sdist by its REUSE.toml (the last matching annotation wins). */
function reuseLicence(
  reuse: { annotations?: { path: string | string[]; "SPDX-License-Identifier": string }[] },
  path: string,
): string | null {
  let found: string | null = null;
  for (const a of reuse.annotations ?? []) {
    const paths = Array.isArray(a.path) ? a.path : [a.path];
    if (paths.some((p) => new Bun.Glob(p).match(path))) found = a["SPDX-License-Identifier"];
  }
  return found;
}

const corpusFiles = readdirSync(join(corpusDir, "files")).sort();
const corpusSha = new Map(corpusFiles.map((f) => [sha256(readFileSync(join(corpusDir, "files", f))), f]));
console.error(`eval-manifest: signatures of the corpus PDFs`);
const corpusSigs = corpusFiles
  .filter((f) => f.endsWith(".pdf"))
  .map((file) => ({ file, sigs: pageSigs(join(corpusDir, "files", file)) }));

const sources = readFileSync(join(raw, "sources.tsv"), "utf8")
  .trim()
  .split("\n")
  .map((l) => l.split("\t"));
const candidates = sources
  .flatMap(([pkg, ver]) => {
    const top = join(raw, pkg!);
    return walk(top)
      .filter((f) => /\.pdf$/i.test(f))
      .map((f) => {
        const sourcePath = relative(top, f);
        return { pkg: pkg!, ver: ver!, path: f, sourcePath, name: `${pkg}/${sourcePath.replaceAll("/", "__")}` };
      });
  })
  .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

const reuse = Bun.TOML.parse(readFileSync(join(raw, "pikepdf/REUSE.toml"), "utf8")) as any;
const licence = (pkg: string, sourcePath: string): string => {
  if (pkg === "pypdf") return "BSD-3-Clause (pypdf's licence; no per-file licence given)";
  if (pkg === "pymupdf") return "AGPL-3.0 (PyMuPDF's licence; no per-file licence given)";
  const l = reuseLicence(reuse, sourcePath);
  return l ? `${l} (pikepdf REUSE.toml)` : "MPL-2.0 (pikepdf's licence; file not annotated in REUSE.toml)";
};

const rows: string[] = [
  ["name", "sha256", "bytes", "pages", "source", "source_path", "licence", "split", "note"].join("\t"),
];
const left: string[] = [];
const seen = new Map<string, string>();
for (const c of candidates) {
  const bytes = readFileSync(c.path);
  const sha = sha256(bytes);
  let why: string | null = null;
  if (corpusSha.has(sha)) why = `same bytes as corpus ${corpusSha.get(sha)}`;
  else if (seen.has(sha)) why = `same bytes as ${seen.get(sha)}`;
  else why = corpusPage(pageSigs(c.path), corpusSigs);
  if (why) {
    left.push(`#   ${c.name}: ${why}`);
    continue;
  }
  seen.set(sha, c.name);
  const { pages, why: note } = pdfPages(c.path);
  const split = Number.parseInt(sha.slice(0, 2), 16) >= 128 ? "report" : "tune";
  rows.push(
    [
      c.name,
      sha,
      bytes.length,
      pages,
      `${c.pkg}==${c.ver}`,
      c.sourcePath,
      licence(c.pkg, c.sourcePath),
      split,
      note,
    ].join("\t"),
  );
}
writeFileSync(out, rows.join("\n") + "\n");
rmSync(raw, { recursive: true, force: true });
const n = (s: string) => rows.filter((r) => r.split("\t")[7] === s).length;
console.error(
  `eval-manifest: ${rows.length - 1} files (tune ${n("tune")}, report ${n("report")}), ${left.length} left out; wrote ${out}`,
);
console.log(left.join("\n"));
