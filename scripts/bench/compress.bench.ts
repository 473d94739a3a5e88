// Issue 5: compression. Ours (light / balanced / strong, examples/pagework) beside
// Ghostscript pdfwrite /screen /ebook /printer, qpdf --object-streams=generate
// --recompress-flate and mutool clean -gggz, on the same inputs in the same run: output
// bytes, time, peak RSS, a visual-quality figure (mean SSIM and PSNR of 100-dpi greyscale
// renders of the first pages against the original's) and content checks (every page kept,
// extractable words kept — Ghostscript writes near-empty files for some corpus PDFs).
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { BenchContext, BenchSection } from "./run";
import { bytesOf, f1, f2, generatedInputs, pageCount, pagework, quality, renderGrey, timed, wordCount , load1, loadNote } from "./pagework-lib";

interface Tool { name: string; level: "light" | "balanced" | "strong" | null; cmd: (i: string, o: string) => string[] }

/** Inputs whose announced page count is not what the file holds, checked on the bytes each run
 * (so the exception lapses if the file changes). unreadable-metadata-images.pdf: pdfinfo reports
 * the linearization dictionary's /N 4, but bytes 1,695,609-2,817,775 are zeros, among them every
 * object of page 4 (its hint table places it at 2,137,481-2,777,957): the file holds three page
 * objects (docs/render.md, "Damaged files"). Every tool is judged against those 3. */
const ZEROED_PAGES_NOTE = " unreadable-metadata-images.pdf is counted as the 3 pages it holds, not the 4 pdfinfo reports (its linearization /N; the bytes of page 4 are zeros, checked by the harness; docs/render.md).";
const ZEROED_PAGES: Record<string, { pages: number; zeroFrom: number; zeroTo: number }> = {
  "unreadable-metadata-images.pdf": { pages: 3, zeroFrom: 1_695_609, zeroTo: 2_817_775 },
};

function pagesInFile(path: string): number {
  const known = ZEROED_PAGES[path.split("/").pop()!];
  if (known) {
    const bytes = readFileSync(path);
    const zeroed = bytes.length >= known.zeroTo && bytes.subarray(known.zeroFrom, known.zeroTo).every((b) => b === 0);
    if (zeroed) return known.pages;
  }
  return pageCount(path);
}

export default async function (ctx: BenchContext): Promise<BenchSection> {
  const bin = pagework(ctx.root);
  const loadBefore = load1();
  const dir = join(ctx.outDir, "compress");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const gen = generatedInputs(ctx.corpusDir, ctx.outDir);
  const c = (n: string) => join(ctx.corpusDir, "files", n);
  // Every corpus PDF (issue 14: the goals hold per file and in sum over all of them, not
  // over an image-heavy subset), plus the generated inputs. The image-heavy set is still
  // marked in the rows (the `image` column of the JSON) for comparison with older runs.
  const imageSet = [c("scanned-multipage-assembly.pdf"), gen.photo50, c("scanned-french-diacritics.pdf"), c("scanned-mixed-3-pages.pdf"), c("cmyk-image.pdf"), c("unreadable-metadata-images.pdf"), c("xfa-filled-form.pdf")];
  const corpusPdfs = readFileSync(join(ctx.corpusDir, "MANIFEST.tsv"), "utf8").split("\n").slice(1)
    .map((l) => l.split("\t")).filter((f) => f[1] === "pdf").map((f) => c(f[0]!));
  const inputs = ctx.quick
    ? [c("scanned-multipage-assembly.pdf"), c("cmyk-image.pdf"), c("geotopo-117-pages.pdf"), c("chinese-template.pdf")]
    : [...corpusPdfs, gen.photo50, gen.text200];
  // Reference tools are bounded too: Ghostscript ran minutes on decompression-bomb.pdf (a
  // timed-out run counts as failed, so as lost content).
  const gs = (preset: string) => (i: string, o: string) => ["timeout", "120", "gs", "-q", "-dNOPAUSE", "-dBATCH", "-dSAFER", "-sDEVICE=pdfwrite", `-dPDFSETTINGS=/${preset}`, `-sOutputFile=${o}`, i];
  const tools: Tool[] = [
    { name: "ours light", level: "light", cmd: (i, o) => [bin, "compress", i, o, "light"] },
    { name: "ours balanced", level: "balanced", cmd: (i, o) => [bin, "compress", i, o, "balanced"] },
    { name: "ours strong", level: "strong", cmd: (i, o) => [bin, "compress", i, o, "strong"] },
    { name: "gs /printer", level: null, cmd: gs("printer") },
    { name: "gs /ebook", level: null, cmd: gs("ebook") },
    { name: "gs /screen", level: null, cmd: gs("screen") },
    { name: "qpdf objstm+flate", level: null, cmd: (i, o) => ["qpdf", "--object-streams=generate", "--recompress-flate", "--compression-level=9", i, o] },
    { name: "mutool clean -gggz", level: null, cmd: (i, o) => ["mutool", "clean", "-gggz", i, o] },
  ];
  const rows: any[] = [];
  const lines = ["| input | tool | out/in bytes | time s | peak RSS MB | pages | words kept | SSIM | PSNR dB | content |", "|---|---|---|---|---|---|---|---|---|---|"];
  for (const input of inputs) {
    const name = input.split("/").pop()!;
    const inBytes = bytesOf(input), inPages = pagesInFile(input), inWords = wordCount(input);
    // Data the renders cannot vouch for (form fields, XFA, attachments): an output a tenth of
    // the size may have dropped it however alike the pages look.
    const invisibleData = hasInvisibleData(input);
    const inForm = hasForm(input);
    const qPages = Math.min(3, inPages);
    const reference = renderGrey(input, dir, "ref", qPages);
    for (const tool of tools) {
      const out = join(dir, "out.pdf");
      rmSync(out, { force: true });
      let t = timed(tool.cmd(input, out));
      // A run under three seconds is timed twice more and its median kept, for every tool
      // alike: at 30-100 ms the machine's noise exceeded the margin of the per-file 0.5x
      // goal, and at 1-3 s it still did (geotopo-117-pages.pdf, timed once: 0.41x in one
      // run, 0.505x in the next with the same code). Longer runs are timed once.
      if (t.code === 0 && t.ms < 3000) {
        const runs = [t, timed(tool.cmd(input, out)), timed(tool.cmd(input, out))].sort((a, b) => a.ms - b.ms);
        t = runs[1]!;
      }
      const bytes = bytesOf(out);
      const pages = pageCount(out);
      const words = wordCount(out);
      const q = quality(reference, out, dir, "q");
      const wordsKept = inWords ? words / inWords : 1;
      // Also lost: a form's fields (the output has no /AcroForm: no longer fillable), and
      // pages rendered far from the input's (PSNR under 10 dB: an image or text gone, as
      // gs on pdf20-utf8-test.pdf, SSIM 0.76, 6.6 dB).
      const formDropped = inForm && bytes > 0 && !hasForm(out);
      const farOff = q.psnr !== undefined && q.psnr > 0 && q.psnr < 10;
      const lost = bytes === 0 || pages !== inPages || wordsKept < 0.95 || formDropped || farOff || (bytes < 10_000 && inBytes > 100_000 && (invisibleData || !(q.ssim >= 0.9)));
      const row = { input: name, image: imageSet.includes(input), failed: t.code !== 0 || bytes === 0, tool: tool.name, inBytes, bytes, ratio: bytes / inBytes, ms: t.ms, rssMb: t.rssMb, code: t.code, pages, inPages, words, inWords, wordsKept, ssim: q.ssim, psnr: q.psnr, lost };
      rows.push(row);
      lines.push(`| ${name} (${(inBytes / 1e6).toFixed(2)} MB, ${inPages} p) | ${tool.name} | ${bytes ? f2(row.ratio) : "—"} | ${f2(t.ms / 1000)} | ${f1(t.rssMb)} | ${pages}/${inPages} | ${inWords ? f2(wordsKept) : "—"} | ${q.ssim ? q.ssim.toFixed(3) : "—"} | ${q.psnr ? f1(q.psnr) : "—"} | ${lost ? `**LOST CONTENT**${bytes < 10_000 ? ` (${bytes} B)` : ""}` : "ok"} |`);
    }
  }
  rmSync(dir, { recursive: true, force: true });
  // Goals over every input, per file and in sum: sums of bytes and times, mean SSIM, over
  // the inputs ours accepts (bad input refused with an error code is listed apart) and
  // where the reference tool kept every page and the text (its near-empty outputs would
  // otherwise count as "small").
  const files = [...new Set(rows.map((x) => x.input))];
  const get = (f: string, t: string) => rows.find((x) => x.input === f && x.tool === t)!;
  const refused = files.filter((f) => get(f, "ours light").failed);
  const pair = (ours: string, theirs: string, only: (f: string) => boolean = () => true) => {
    const kept = files.filter((f) => only(f) && !refused.includes(f) && !get(f, theirs).lost);
    const sum = (t: string, k: string) => kept.reduce((a, f) => a + get(f, t)[k], 0);
    const mean = (t: string, k: string) => sum(t, k) / Math.max(1, kept.length);
    return {
      bytes: sum(ours, "bytes") / sum(theirs, "bytes"), time: sum(ours, "ms") / sum(theirs, "ms"),
      ssimOurs: mean(ours, "ssim"), ssimTheirs: mean(theirs, "ssim"),
      excluded: files.filter((f) => only(f) && !refused.includes(f) && get(f, theirs).lost),
      larger: kept.filter((f) => get(f, ours).bytes > get(f, theirs).bytes),
      // Per file, named in the goal lines: a lower SSIM, and a time over half the tool's.
      blurrier: kept.filter((f) => get(f, ours).ssim < get(f, theirs).ssim),
      slower: kept.filter((f) => get(f, ours).ms > 0.5 * get(f, theirs).ms),
    };
  };
  const bal = pair("ours balanced", "gs /ebook"), str = pair("ours strong", "gs /screen"), lig = pair("ours light", "qpdf objstm+flate");
  // The same goals on two fixed halves of the inputs, split by the SHA-1 of the file name
  // (first byte even: tune, odd: holdout), so a setting tuned on one half is seen on the other.
  const half = (f: string) => (createHash("sha1").update(f).digest()[0]! % 2 === 0 ? "tune" : "holdout");
  const halves = (["tune", "holdout"] as const).map((h) => {
    const only = (f: string) => half(f) === h;
    const b = pair("ours balanced", "gs /ebook", only), st = pair("ours strong", "gs /screen", only);
    const n = files.filter(only).length;
    return `- ${h} half (${n} inputs): balanced vs /ebook bytes ${f2(b.bytes)}, SSIM ${b.ssimOurs.toFixed(3)} vs ${b.ssimTheirs.toFixed(3)}, time ${f2(b.time)}${b.larger.length ? ` (larger on ${b.larger.length}: ${b.larger.join(", ")})` : ""}; strong vs /screen bytes ${f2(st.bytes)}${st.larger.length ? ` (larger on ${st.larger.length}: ${st.larger.join(", ")})` : ""}.`;
  });
  const verdict = (ok: boolean) => (ok ? "**met**" : "**missed**");
  // Levels ordered on every file: strong <= balanced <= light <= input.
  const accepted = files.filter((f) => !refused.includes(f));
  const disorder = accepted.flatMap((f) => {
    const [l, b, s2] = ["ours light", "ours balanced", "ours strong"].map((t) => get(f, t).bytes);
    const inB = get(f, "ours light").inBytes;
    return [
      ...(l > inB ? [`${f}: light ${l} > input ${inB}`] : []),
      ...(b > l ? [`${f}: balanced ${b} > light ${l}`] : []),
      ...(s2 > b ? [`${f}: strong ${s2} > balanced ${b}`] : []),
    ];
  });
  const ourLost = rows.filter((x) => x.tool.startsWith("ours") && x.lost && !refused.includes(x.input));
  const theirLost = rows.filter((x) => !x.tool.startsWith("ours") && x.lost);
  const goals = {
    balancedBytes: bal.bytes, balancedSsim: bal.ssimOurs - bal.ssimTheirs, balancedTime: bal.time,
    strongBytes: str.bytes, lightBytes: lig.bytes, levelsOutOfOrder: disorder, refused,
    oursLostContent: ourLost.length, theirsLostContent: theirLost.map((x) => `${x.tool} on ${x.input}`),
  };
  // The balanced goal per file: the files whose SSIM is lower or whose time is over half the tool's.
  const perFile = (p: ReturnType<typeof pair>, ours: string, theirs: string) => {
    const ssim = (f: string) => `${f} (${get(f, ours).ssim.toFixed(3)} vs ${get(f, theirs).ssim.toFixed(3)})`;
    const time = (f: string) => `${f} (${(get(f, ours).ms / 1000).toFixed(2)} vs ${(get(f, theirs).ms / 1000).toFixed(2)} s)`;
    return ` Per file: SSIM lower than ${theirs}'s on ${p.blurrier.map(ssim).join(", ") || "none"}; time over 0.5x ${theirs}'s on ${p.slower.map(time).join(", ") || "none"}.`;
  };
  const extra = (p: ReturnType<typeof pair>, t: string) => `${p.larger.length ? ` Larger than ${t} on: ${p.larger.join(", ")}.` : ""}${p.excluded.length ? ` Excluded (${t} lost content): ${p.excluded.join(", ")}.` : ""}`;
  const loadAfter = load1();
  const markdown = [
    loadNote(loadBefore, loadAfter),
    "",
    (ctx.quick ? "Quick set: " + inputs.map((p) => p.split("/").pop()).join(", ") : "Every PDF of the corpus (MANIFEST.tsv) and the generated inputs") + ". Generated inputs are built by the harness (bench/out/gen). Time: wall time of one run, or the median of three for a run under three seconds (every tool alike). Quality = mean over the first (up to) 3 pages of SSIM (8x8 windows) and PSNR of 100-dpi greyscale renders (mutool draw) against the original's; 1.000 / 99 dB = identical. Content: same page count and >= 95% of pdftotext's words; a file under 10 KB from an input over 100 KB is flagged too when its renders differ (SSIM < 0.9) or the input holds form fields or attached files (which renders cannot check). Also counted as lost: a form whose fields are gone (the input's /AcroForm has fields, the output's has none) and renders under 10 dB PSNR.",
    "",
    ...lines,
    "",
    `Goals over every input, per file (files named when they miss) and in sum (sums of bytes and seconds, mean SSIM), over the inputs where the reference tool kept the content. Refused by ours with an error code (bad input: encrypted, malformed, unsupported filter, decompression bomb): ${refused.length ? refused.join(", ") : "none"}.`,
    "",
    `- balanced vs gs /ebook: bytes ${f2(bal.bytes)} (goal <= 1 in sum and on every file) ${verdict(bal.bytes <= 1 && bal.larger.length === 0)}; SSIM ${bal.ssimOurs.toFixed(3)} vs ${bal.ssimTheirs.toFixed(3)} (goal >=) ${verdict(bal.ssimOurs >= bal.ssimTheirs)}; time ${f2(bal.time)} (goal <= 0.5) ${verdict(bal.time <= 0.5)}.${perFile(bal, "ours balanced", "gs /ebook")}${extra(bal, "/ebook")}${bal.time <= 0.5 && bal.slower.length === 0 ? "" : " Where the time goes on the files that miss: docs/render.md, compress."}`,
    `- strong vs gs /screen: bytes ${f2(str.bytes)} (goal <= 1 in sum and on every file) ${verdict(str.bytes <= 1 && str.larger.length === 0)}; SSIM ${str.ssimOurs.toFixed(3)} vs ${str.ssimTheirs.toFixed(3)}; time ${f2(str.time)}.${extra(str, "/screen")}`,
    `- light vs qpdf --object-streams=generate --recompress-flate: bytes ${f2(lig.bytes)} (goal <= 1 in sum and on every file) ${verdict(lig.bytes <= 1 && lig.larger.length === 0)}; time ${f2(lig.time)}.${extra(lig, "qpdf")}`,
    ...halves,
    `- Levels ordered (strong <= balanced <= light <= input) on every file: ${verdict(disorder.length === 0)}${disorder.length ? ` (${disorder.join("; ")})` : ""}.`,
    `- Content kept by every level of ours on every input: ${verdict(ourLost.length === 0)}${ourLost.length ? ` (lost: ${ourLost.map((x) => `${x.tool} on ${x.input} (${x.pages}/${x.inPages} pages)`).join(", ")})` : ""}.${ZEROED_PAGES_NOTE} Other tools' outputs that lost pages or text: ${theirLost.length ? theirLost.map((x) => `${x.tool} on ${x.input} (${x.bytes} B, ${x.pages}/${x.inPages} pages, words ${f2(x.wordsKept)}, SSIM ${x.ssim.toFixed(2)})`).join("; ") : "none"}.`,
  ].join("\n");
  return { title: "Compress: light / balanced / strong", markdown, json: { rows, goals, pairs: { balancedVsEbook: bal, strongVsScreen: str, lightVsQpdf: lig } } };
}

/** True when the catalogue names interactive form data or embedded files (`mutool show`
 * prints it resolved, object streams included): what renders and pdftotext cannot check. */
function hasInvisibleData(input: string): boolean {
  const show = (path: string) => spawnSync("mutool", ["show", input, path], { encoding: "utf8", timeout: 30_000 }).stdout ?? "";
  return /\/AcroForm/.test(show("trailer/Root")) || /\/EmbeddedFiles/.test(show("trailer/Root/Names"));
}

/** True when the catalogue has an interactive form with at least one field. */
function hasForm(pdf: string): boolean {
  const r = spawnSync("mutool", ["show", pdf, "trailer/Root/AcroForm/Fields"], { encoding: "utf8", timeout: 30_000 });
  return /\d+ 0 R/.test(r.stdout ?? "");
}
