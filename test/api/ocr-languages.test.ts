// Issue 18 item 3 over HTTP: the `languages` option of ocr and searchable_pdf (an extension).
// Supported codes are accepted and listed (GET /operations, the OpenAPI document, marked
// x-extension); an unknown code or an empty list is 422 invalid_options naming the supported
// codes; a generated Japanese page read with languages ["jpn"] comes back with its kana, and its
// searchable PDF's text layer carries them too.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { client, startService, type Service } from "../support/service";
import { createJob, download, finishedJob, keyFor, tempDir, uploadOk } from "../support/jobs";
import { renderLangPages } from "../support/lang-pages";
import { ocrLanguages } from "../../src/domain/ocr-languages";

const kana = (s: string) => [...s].filter((c) => c >= "\u3040" && c <= "\u30ff").length;

describe("ocr languages option", () => {
  let svc: Service;
  let tmp: ReturnType<typeof tempDir>;
  let accountId: string;
  let jpnPage: { png: string; text: string };
  const key = async () => (await keyFor(svc, accountId, "test")).key;

  beforeAll(async () => {
    svc = await startService({ workers: 1, env: { SANDBOX_OCR: "real" } });
    tmp = tempDir();
    accountId = (await svc.newKey()).accountId;
    // A clean 150-dpi page: enough for the check, quick to render and read.
    jpnPage = renderLangPages(join(tmp.dir, "pages"), ["jpn"], { dpi: 150, clean: true })[0]!;
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
    tmp?.cleanup();
  }, 60_000);

  test("GET /operations and the OpenAPI document list the supported codes, marked as an extension", async () => {
    const k = await key();
    const ops = (await client(svc.baseUrl, k)("GET", "/operations")).json;
    const doc = (await client(svc.baseUrl)("GET", "/openapi.json")).json;
    for (const name of ["ocr", "searchable_pdf"]) {
      const fromCatalogue = ops.supported.find((o: any) => o.name === name).options.properties.languages;
      const fromOpenApi = doc.components.schemas[`Options_${name}`].properties.languages;
      for (const schema of [fromCatalogue, fromOpenApi]) {
        expect(schema["x-extension"]).toBe(true);
        expect(schema.minItems).toBe(1);
        const codes = schema.items.anyOf.map((a: any) => a.const);
        expect(codes).toEqual(ocrLanguages);
        for (const c of ["eng", "deu", "fra", "spa", "ita", "por", "nld", "chi_sim", "jpn", "chi_tra"])
          expect(codes).toContain(c);
      }
    }
  });

  test("an unknown code or an empty list is 422 invalid_options naming the supported codes; known codes are accepted", async () => {
    const k = await key();
    const file = await uploadOk(svc, k, jpnPage.png);
    const post = (operation: string, options: unknown) =>
      client(svc.baseUrl, k)("POST", "/jobs", { operation, file_id: file.id, options });
    for (const operation of ["ocr", "searchable_pdf"]) {
      // qaa-qtz are ISO 639's codes for local use: neither a model nor a traineddata reads them.
      const unknown = await post(operation, { languages: ["eng", "qaa"] });
      expect(unknown.status).toBe(422);
      expect(unknown.json.error.code).toBe("invalid_options");
      expect(unknown.json.error.param).toBe("options.languages[1]");
      expect(unknown.json.error.message).toContain('"qaa" is not supported');
      expect(unknown.json.error.message).toContain(ocrLanguages.join(", "));
      const empty = await post(operation, { languages: [] });
      expect(empty.status).toBe(422);
      expect(empty.json.error.code).toBe("invalid_options");
      expect(empty.json.error.param).toBe("options.languages");
      const notArray = await post(operation, { languages: "jpn" });
      expect(notArray.status).toBe(422);
    }
    const ok = await post("searchable_pdf", { languages: ["eng", "deu"] });
    expect(ok.status).toBe(202);
    expect(ok.json.options.languages).toEqual(["eng", "deu"]);
  });

  test("a Japanese page read with languages [jpn] returns its kana, in the JSON and in the searchable PDF", async () => {
    const k = await key();
    const file = await uploadOk(svc, k, jpnPage.png);
    const created = await createJob(svc, k, { operation: "ocr", file_id: file.id, options: { languages: ["jpn"] } });
    const job = await finishedJob(svc, k, created.id, 180_000);
    expect(job.status).toBe("succeeded");
    const r = await download(svc, k, job.id, "?format=json");
    expect(r.json.engine).toBe("pp-ocrv6-small");
    const text: string = r.json.pages[0].text;
    // The reference page holds the passage twice; nearly all its kana come back.
    expect(kana(text)).toBeGreaterThan(0.9 * kana(jpnPage.text));
    expect(text.replace(/\s+/g, "")).toContain("生まれながらにして自由であり");

    const pdfJob = await finishedJob(
      svc,
      k,
      (await createJob(svc, k, { operation: "searchable_pdf", file_id: file.id, options: { languages: ["jpn"] } })).id,
      180_000,
    );
    expect(pdfJob.status).toBe("succeeded");
    const d = await download(svc, k, pdfJob.id);
    const out = join(tmp.dir, "jpn.pdf");
    writeFileSync(out, d.bytes);
    const layer = spawnSync("pdftotext", [out, "-"], { encoding: "utf8" }).stdout;
    expect(kana(layer)).toBeGreaterThan(0.9 * kana(jpnPage.text));
    expect(layer.replace(/\s+/g, "")).toContain("生まれながらにして自由であり");
  }, 400_000);
});
