// Operation name -> executor, checked against the catalogue (src/domain/operations.ts) when
// compiled: every operation has exactly one executor, typed by its options and results.
import { convert } from "./convert";
import { ocr, searchablePdf } from "./ocr";
import { deletePages, merge, protect, reorder, rotate, split, unlock } from "./page-ops";
import { compress, redact } from "./pagework";
import type { ExecutorMap } from "./types";

export const executors = {
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
} satisfies ExecutorMap;
