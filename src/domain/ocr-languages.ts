// OCR languages offered by the `languages` option of ocr and searchable_pdf: the union of the
// Tesseract-style codes the recognition models of models/manifest.json read (their `languages`).
import manifest from "../../models/manifest.json";

type Entry = { name: string; engine?: string; languages?: string[] };

/** Recognisers in manifest order with their codes; the engine picks the first that reads all. */
export const ocrRecognisers = (manifest.models as Entry[])
  .filter((m) => Array.isArray(m.languages))
  .map((m) => ({ name: m.name, engine: m.engine ?? m.name, languages: m.languages! }));

/** Every supported code, once each, in manifest order. */
export const ocrLanguages: string[] = [...new Set(ocrRecognisers.flatMap((r) => r.languages))];

/** The codes read when `languages` is absent (the default recogniser, `rec`). */
export const defaultOcrLanguages: string[] = ocrRecognisers.find((r) => r.name === "rec")?.languages ?? [];
