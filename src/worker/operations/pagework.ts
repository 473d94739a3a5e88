// Heavy page work of the native engine: pdf -> jpg (a convert pair), redact, compress.
// Each executor hands paths to the addon, which renders/rebuilds on its own threads with
// page checkpoints for progress and cancellation (see crates/engine/src/{render,redact,compress}.rs).
import { join } from "node:path";
import { engine } from "../../engine/native";
import { config } from "../../config";
import { convertOptionsFor, type FileResult } from "../../domain/operations";
import type { ExecutionInput, Executor, FanoutRunner } from "./types";
import { baseName } from "./naming";

const renderThreads = config.renderThreads;

/** convert pdf -> jpg: one page -> a .jpg, several -> a ZIP of page-NNNN.jpg (1-based input page numbers). */
export const pdfToJpg: Executor<"convert"> = async (input) => {
  const o = convertOptionsFor("jpg", input.options);
  const out = join(input.workDir, "out.bin");
  const r = await engine().renderJpeg(input.inputs[0]!.path, out, { ...o, threads: renderThreads }, input.control);
  const base = baseName(input.inputs[0]!.filename);
  if (r.zip)
    return {
      pages_processed: r.pages_processed,
      result: { type: "file", path: out, filename: `${base}-jpg.zip`, content_type: "application/zip" },
    };
  return {
    pages_processed: r.pages_processed,
    result: { type: "file", path: out, filename: `${base}.jpg`, content_type: "image/jpeg" },
  };
};

/** pdf -> jpg as tasks (worker/fanout.ts): each task renders its pages into a ZIP (a task has
 * many pages), the assembly joins the ZIPs in page order into the one a whole run writes. */
export const pdfToJpgRunner: FanoutRunner<"convert"> = {
  async task(input, pages) {
    const partialPath = join(input.workDir, "pages.zip");
    const r = await engine().renderJpeg(
      input.inputs[0]!.path,
      partialPath,
      { ...convertOptionsFor("jpg", input.options), pages, threads: renderThreads },
      input.control,
    );
    return { pages_processed: r.pages_processed, partialPath, summary: {} };
  },
  async assemble(input, partials) {
    const out = join(input.workDir, "out.bin");
    await engine().renderJoin(
      partials.map((p) => p.path),
      out,
      input.control,
    );
    return {
      pages_processed: 0,
      result: {
        type: "file",
        path: out,
        filename: `${baseName(input.inputs[0]!.filename)}-jpg.zip`,
        content_type: "application/zip",
      },
    };
  },
};

const redactedFile = (input: ExecutionInput<"redact">, path: string): FileResult => ({
  type: "file",
  path,
  filename: `${baseName(input.inputs[0]!.filename)}-redacted.pdf`,
  content_type: "application/pdf",
});

export const redact: Executor<"redact"> = async (input) => {
  const out = join(input.workDir, "out.pdf");
  const r = await engine().redact(input.inputs[0]!.path, out, input.options, input.control);
  return { pages_processed: r.pages_processed, result: redactedFile(input, out) };
};

/** redact as tasks (worker/fanout.ts): each task renders and burns in its pages' regions
 * (redactBurn), the assembly rebuilds those pages in the original and saves it once
 * (redactAssemble: the code and order of a whole redaction). */
export const redactRunner: FanoutRunner<"redact"> = {
  async task(input, pages) {
    const partialPath = join(input.workDir, "burnt.bin");
    const regions = input.options.regions.filter((r) => pages.includes(r.page));
    const n = await engine().redactBurn(
      input.inputs[0]!.path,
      partialPath,
      { ...input.options, regions },
      input.control,
    );
    return { pages_processed: n, partialPath, summary: {} };
  },
  async assemble(input, partials) {
    const out = join(input.workDir, "out.pdf");
    await engine().redactAssemble(
      input.inputs[0]!.path,
      out,
      input.options,
      partials.map((p) => p.path),
      input.control,
    );
    return { pages_processed: 0, result: redactedFile(input, out) };
  },
};

export const compress: Executor<"compress"> = async (input) => {
  const out = join(input.workDir, "out.pdf");
  const { level } = input.options;
  const r = await engine().compress(input.inputs[0]!.path, out, input.options, input.control);
  // The engine redid a lossy level on a safer path when the first one lost content.
  const fallback =
    r.path === "own_image_pass_only"
      ? `Some images of this file could not be recompressed at level ${level} without damaging its content; they were kept as they are.`
      : r.path === "lossless_fallback"
        ? `This file's images could not be recompressed at level ${level} without damaging its content; it was compressed losslessly (images unchanged).`
        : undefined;
  const note = r.kept_original
    ? `Compression at level ${level} did not make this file smaller; the result is the original file, unchanged.`
    : fallback;
  return {
    pages_processed: r.page_count,
    result: {
      type: "file",
      path: out,
      filename: `${baseName(input.inputs[0]!.filename)}-compressed.pdf`,
      content_type: "application/pdf",
      ...(note ? { note } : {}),
    },
  };
};
