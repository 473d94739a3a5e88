// Operation name -> executor. An operation without an executor here is not offered by
// POST /jobs (see `available` in src/domain/operations.ts) rather than faked.
import type { Executor } from "./types";
import { deletePages, merge, protect, reorder, rotate, split, unlock } from "./page-ops";
import { convert } from "./convert";
import { compress, redact } from "./pagework";
import { ocr, searchablePdf } from "./ocr";

export const executors: Record<string, Executor> = {
  rotate,
  reorder,
  delete_pages: deletePages,
  merge,
  split,
  protect,
  unlock,
  convert,
  redact,
  compress,
  ocr,
  searchable_pdf: searchablePdf,
};
