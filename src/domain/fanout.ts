// Page-parallel jobs (docs/scaling.md, "Page-parallel jobs"), the pure rules: which jobs are
// split into page-range tasks, and into how many. The worker applies them when it claims a job
// (worker/fanout.ts); the queue stores the tasks (queue/tasks.ts).
import type { OperationName, OptionsOf } from "./operations";

/** How a job's pages are split and put back together again; one runner per family (worker/fanout.ts). */
export type FanoutFamily = "ocr_blocks" | "ocr_searchable" | "pdf_to_jpg" | "redact";

/**
 * The fewest pages one task gets. Below twice this a job is never split: a task's fixed costs
 * (a claim, opening the document, storing its partial result, one more step at the end) must
 * stay small beside its pages. OCR costs about a second a page on one core (bench/REPORT.md,
 * section `ocr`), so four pages already dwarf those costs (a few tens of milliseconds); a page
 * rendered to JPEG costs some tens of milliseconds (section `render`), so a task renders 32; a
 * redacted page is rendered and encoded too, at 150 dpi by default, then rebuilt: 16.
 */
export const minTaskPages: Record<FanoutFamily, number> = {
  ocr_blocks: 4,
  ocr_searchable: 4,
  pdf_to_jpg: 32,
  redact: 16,
};

/** Tasks per job at most, whatever the fleet: a 5,000-page job is 256 rows, not 5,000. */
export const MAX_TASKS = 256;

/** The job's family when its operation and options are page-separable, else null (run whole). */
export function fanoutFamily(
  operation: OperationName,
  options: OptionsOf<OperationName>,
  inputKind: string,
): FanoutFamily | null {
  if (inputKind !== "pdf") return null;
  if (operation === "ocr" || operation === "searchable_pdf") {
    const o = options as OptionsOf<"ocr">;
    // gundam reads one page: nothing to split.
    if (o.mode === "gundam") return null;
    return operation === "ocr" && o.output !== "searchable_pdf" ? "ocr_blocks" : "ocr_searchable";
  }
  if (operation === "convert" && (options as OptionsOf<"convert">).target === "jpg") return "pdf_to_jpg";
  if (operation === "redact") return "redact";
  return null;
}

/** The pages a job of `family` reads, 0-based and ascending: those with a region for a
 * redaction (only they are rendered), else `selectedPages`. */
export function familyPages(family: FanoutFamily, options: OptionsOf<OperationName>, pageCount: number): number[] {
  if (family === "redact")
    return [...new Set((options as OptionsOf<"redact">).regions.map((r) => r.page))].sort((a, b) => a - b);
  return selectedPages(options as { pages?: number[] }, pageCount);
}

/** The pages the job reads, 0-based and ascending: `options.pages` (validated at creation) or all. */
export function selectedPages(options: { pages?: number[] }, pageCount: number): number[] {
  const chosen = options.pages?.length ? [...new Set(options.pages)].sort((a, b) => a - b) : null;
  return chosen ?? Array.from({ length: pageCount }, (_, i) => i);
}

/**
 * Cuts `pages` into the tasks of one job, or returns null when the job should run whole.
 * Aim: `tasksPerWorker` tasks for each live worker, so that every worker gets work and a slow
 * task (a dense page, a busy host) leaves the others something to take meanwhile; never fewer
 * pages than `minTaskPages`, never more than MAX_TASKS tasks. The tasks are consecutive runs of
 * `pages` whose sizes differ by one page at most. A job with too few pages for two tasks runs whole.
 */
export function planTasks(
  pages: number[],
  family: FanoutFamily,
  liveWorkers: number,
  tasksPerWorker: number,
): number[][] | null {
  const n = pages.length;
  const perTask = Math.max(
    minTaskPages[family],
    Math.ceil(n / (Math.max(1, tasksPerWorker) * Math.max(1, liveWorkers))),
    Math.ceil(n / MAX_TASKS),
  );
  // Every task gets perTask pages or one more: fewer tasks rather than a short one.
  const count = Math.floor(n / perTask);
  if (count < 2) return null;
  const tasks: number[][] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    const size = Math.floor(n / count) + (i < n % count ? 1 : 0);
    tasks.push(pages.slice(at, at + size));
    at += size;
  }
  return tasks;
}
