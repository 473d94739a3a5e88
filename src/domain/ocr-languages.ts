// OCR languages offered by the `languages` option of ocr and searchable_pdf: the Tesseract-style
// codes the recognition models of models/manifest.json read (their `languages`), then every
// language whose Tesseract traineddata is installed on this machine, found when the process
// starts (the engine finds the same ones: crates/ocr/src/tesseract/tessdata.rs).
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import manifest from "../../models/manifest.json";
import { config } from "../config";

type Entry = { name: string; engine?: string; languages?: string[] };

/** Recognisers in manifest order with their codes; the engine picks the first that reads all. */
export const ocrRecognisers = (manifest.models as Entry[])
  .filter((m) => Array.isArray(m.languages))
  .map((m) => ({ name: m.name, engine: m.engine ?? m.name, languages: m.languages! }));

/** The codes read when `languages` is absent (the default recogniser, `rec`). */
export const defaultOcrLanguages: string[] = ocrRecognisers.find((r) => r.name === "rec")?.languages ?? [];

/** Debian's tessdata directories, newest Tesseract first. */
const systemTessdata = ["/usr/share/tesseract-ocr/5/tessdata", "/usr/share/tesseract-ocr/4.00/tessdata"];
/** Traineddata that are not a language: orientation and script detection, legacy equations. */
const notLanguages = new Set(["osd", "equ"]);

/** The tessdata directory: TESSDATA_PREFIX, else the first of Debian's that exists. */
export function tessdataDir(): string | null {
  if (config.tessdataPrefix) return config.tessdataPrefix;
  return systemTessdata.find((d) => existsSync(d)) ?? null;
}

/** `<code>` for each `<code>.traineddata` and `script/<Name>` for `script/<Name>.traineddata`, sorted. */
export function installedTesseractLanguages(dir: string | null = tessdataDir()): string[] {
  if (!dir) return [];
  const list = (d: string, prefix: string) => {
    try {
      return readdirSync(d)
        .filter((f) => f.endsWith(".traineddata"))
        .map((f) => f.slice(0, -".traineddata".length))
        .filter((c) => /^[A-Za-z0-9_]+$/.test(c) && !notLanguages.has(c))
        .map((c) => prefix + c);
    } catch {
      return [];
    }
  };
  return [...list(dir, ""), ...list(join(dir, "script"), "script/")].sort();
}

/** Languages Tesseract reads on this machine. */
export const tesseractLanguages: string[] = installedTesseractLanguages();

/** Every code the ONNX recognisers read, once each, in manifest order. */
export const modelLanguages: string[] = [...new Set(ocrRecognisers.flatMap((r) => r.languages))];

/** Every supported code: the models' in manifest order, then Tesseract's installed ones. */
export const ocrLanguages: string[] = [...new Set([...modelLanguages, ...tesseractLanguages])];

/** How to install a language that is missing (the Debian package that holds its traineddata). */
export function ocrLanguageInstallHint(code: string): string {
  if (code.startsWith("script/"))
    return `install the Debian package tesseract-ocr-script-<iso15924> that holds ${code}.traineddata (e.g. tesseract-ocr-script-cyrl for script/Cyrillic), or add it to OCR_EXTRA_LANGUAGES and run scripts/setup.sh`;
  return `if it is a Tesseract language, install it with apt-get install tesseract-ocr-${code.toLowerCase().replaceAll("_", "-")} or add ${code} to OCR_EXTRA_LANGUAGES and run scripts/setup.sh`;
}
