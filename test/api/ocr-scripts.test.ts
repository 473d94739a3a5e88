// Issue 40 items 1-3 over HTTP: the languages Tesseract reads on this deployment (its installed
// traineddata) are offered and listed by GET /operations; a language that is not installed is
// 422 invalid_options saying how to install it; a generated Russian page read with
// languages ["rus"] and an Arabic one with ["ara"] come back through the queue and the worker
// as JSON and as a searchable PDF whose text layer pdftotext reads in logical order.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { client, startService, type Service } from "../support/service";
import { createJob, download, finishedJob, keyFor, tempDir, uploadOk } from "../support/jobs";
import { renderLangPages } from "../support/lang-pages";
import { tesseractLanguages } from "../../src/domain/ocr-languages";

/** Whitespace runs as one space, poppler's bidi marks and sentence punctuation dropped. */
const words = (s: string) =>
  s
    .replace(/[\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, "")
    .replace(/[.,]/g, " ")
    .split(/\s+/)
    .filter(Boolean);

function cer(ref: string, hyp: string): number {
  const r = [...words(ref).join(" ")];
  const h = [...words(hyp).join(" ")];
  let prev = Array.from({ length: h.length + 1 }, (_, j) => j);
  let cur = new Array<number>(h.length + 1);
  for (let i = 1; i <= r.length; i++) {
    cur[0] = i;
    for (let j = 1; j <= h.length; j++)
      cur[j] = Math.min(prev[j - 1]! + (r[i - 1] === h[j - 1] ? 0 : 1), prev[j]! + 1, cur[j - 1]! + 1);
    [prev, cur] = [cur, prev];
  }
  return prev[h.length]! / Math.max(1, r.length);
}

const installed = ["rus", "ara"].every((l) => tesseractLanguages.includes(l));

describe.skipIf(!installed)("ocr with the languages Tesseract reads", () => {
  let svc: Service;
  let tmp: ReturnType<typeof tempDir>;
  let accountId: string;
  let pages: Map<string, { png: string; text: string }>;
  const key = async () => (await keyFor(svc, accountId, "test")).key;

  beforeAll(async () => {
    svc = await startService({ workers: 1, env: { SANDBOX_OCR: "real" } });
    tmp = tempDir();
    accountId = (await svc.newKey()).accountId;
    // Clean 200-dpi pages; each holds its passage twice (13 pt, then 10 pt).
    pages = new Map(
      renderLangPages(join(tmp.dir, "pages"), ["rus", "ara"], { dpi: 200, clean: true }).map((p) => [p.lang, p]),
    );
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
    tmp?.cleanup();
  }, 60_000);

  test("GET /operations lists the installed Tesseract languages beside the recognisers' codes", async () => {
    const ops = (await client(svc.baseUrl, await key())("GET", "/operations")).json;
    const codes = ops.supported
      .find((o: any) => o.name === "ocr")
      .options.properties.languages.items.anyOf.map((a: any) => a.const);
    for (const c of ["eng", "jpn", ...tesseractLanguages]) expect(codes).toContain(c);
  });

  test("a language not installed is 422 invalid_options naming the package to install", async () => {
    const k = await key();
    const file = await uploadOk(svc, k, pages.get("rus")!.png);
    // qaa-qtz are ISO 639's codes for local use: no traineddata carries them.
    const res = await client(svc.baseUrl, k)("POST", "/jobs", {
      operation: "ocr",
      file_id: file.id,
      options: { languages: ["rus", "qaa"] },
    });
    expect(res.status).toBe(422);
    expect(res.json.error.code).toBe("invalid_options");
    expect(res.json.error.param).toBe("options.languages[1]");
    expect(res.json.error.message).toContain('"qaa" is not supported');
    expect(res.json.error.message).toContain("apt-get install tesseract-ocr-qaa");
    expect(res.json.error.message).toContain("OCR_EXTRA_LANGUAGES");
  });

  for (const [lang, bound] of [
    ["rus", 0.03],
    ["ara", 0.05],
  ] as const) {
    test(`a ${lang} page read with languages [${lang}]: Tesseract's text in logical order in the JSON and the text layer`, async () => {
      const k = await key();
      const page = pages.get(lang)!;
      const file = await uploadOk(svc, k, page.png);
      const job = await finishedJob(
        svc,
        k,
        (await createJob(svc, k, { operation: "ocr", file_id: file.id, options: { languages: [lang] } })).id,
        180_000,
      );
      expect(job.status).toBe("succeeded");
      expect(job.result.pages_processed).toBe(1);
      const r = await download(svc, k, job.id, "?format=json");
      expect(r.json.engine).toStartWith("tesseract-");
      const text: string = r.json.pages[0].text;
      expect(cer(page.text, text)).toBeLessThanOrEqual(bound);
      // Logical order: the page starts with the passage's first words.
      expect(words(text).slice(0, 3)).toEqual(words(page.text).slice(0, 3));

      const pdfJob = await finishedJob(
        svc,
        k,
        (await createJob(svc, k, { operation: "searchable_pdf", file_id: file.id, options: { languages: [lang] } })).id,
        180_000,
      );
      expect(pdfJob.status).toBe("succeeded");
      const out = join(tmp.dir, `${lang}.pdf`);
      writeFileSync(out, (await download(svc, k, pdfJob.id)).bytes);
      const layer = spawnSync("pdftotext", [out, "-"], { encoding: "utf8" }).stdout;
      expect(cer(page.text, layer)).toBeLessThanOrEqual(bound);
      expect(words(layer).slice(0, 3)).toEqual(words(page.text).slice(0, 3));
    }, 400_000);
  }
});
