// Structural PDF operations, run by the native engine page by page with cancel checkpoints.
// The job's options go to the addon as they are: the engine's option structs take the API's names.
import { join } from "node:path";
import { engine } from "../../engine/native";
import type { FileResult } from "../../domain/operations";
import type { ExecutionInput, Executor } from "./types";
import { baseName } from "./naming";

function pdfResult(
  input: ExecutionInput,
  out: string,
  suffix: string,
  pages: number,
): { pages_processed: number; result: FileResult } {
  return {
    pages_processed: pages,
    result: {
      type: "file",
      path: out,
      filename: `${baseName(input.inputs[0]!.filename)}-${suffix}.pdf`,
      content_type: "application/pdf",
    },
  };
}

export const rotate: Executor<"rotate"> = async (input) => {
  const out = join(input.workDir, "out.pdf");
  const r = await engine().rotate(input.inputs[0]!.path, out, input.options, input.control);
  return pdfResult(input, out, "rotated", r.page_count);
};

export const reorder: Executor<"reorder"> = async (input) => {
  const out = join(input.workDir, "out.pdf");
  const r = await engine().reorder(input.inputs[0]!.path, out, input.options, input.control);
  return pdfResult(input, out, "reordered", r.page_count);
};

export const deletePages: Executor<"delete_pages"> = async (input) => {
  const out = join(input.workDir, "out.pdf");
  const r = await engine().deletePages(input.inputs[0]!.path, out, input.options, input.control);
  return pdfResult(input, out, "pages-deleted", r.page_count);
};

export const merge: Executor<"merge"> = async (input) => {
  const out = join(input.workDir, "out.pdf");
  const r = await engine().merge(
    input.inputs.map((i) => i.path),
    out,
    input.control,
  );
  return {
    pages_processed: r.page_count,
    result: { type: "file", path: out, filename: "merged.pdf", content_type: "application/pdf" },
  };
};

export const split: Executor<"split"> = async (input) => {
  const out = join(input.workDir, "out.zip");
  const r = await engine().split(input.inputs[0]!.path, out, input.options, input.control);
  return {
    pages_processed: r.pages_processed,
    result: {
      type: "file",
      path: out,
      filename: `${baseName(input.inputs[0]!.filename)}-split.zip`,
      content_type: "application/zip",
    },
  };
};

export const protect: Executor<"protect"> = async (input) => {
  const out = join(input.workDir, "out.pdf");
  const r = await engine().protect(input.inputs[0]!.path, out, input.options, input.control);
  return pdfResult(input, out, "protected", r.page_count);
};

export const unlock: Executor<"unlock"> = async (input) => {
  const out = join(input.workDir, "out.pdf");
  const r = await engine().unlock(input.inputs[0]!.path, out, input.options, input.control);
  return pdfResult(input, out, "unlocked", r.page_count);
};
