// Page-parallel jobs, the pure rules (src/domain/fanout.ts; docs/scaling.md, "Task size"): which
// jobs are split, and into which tasks, from the page count and the live workers.
import { describe, expect, test } from "bun:test";
import { familyPages, fanoutFamily, MAX_TASKS, minTaskPages, planTasks, selectedPages } from "../../src/domain/fanout";
import { withDefaults } from "../../src/domain/operations";

const sizes = (tasks: number[][] | null) => tasks?.map((t) => t.length) ?? null;

describe("planTasks", () => {
  test("a job of no more pages than one task runs whole", () => {
    expect(planTasks([0, 1, 2, 3], "ocr_blocks", 8, 4)).toBeNull();
    expect(planTasks([0], "ocr_searchable", 1, 4)).toBeNull();
  });

  test("tasks aim at tasks-per-worker for each live worker, never below the minimum task size", () => {
    const pages = (n: number) => Array.from({ length: n }, (_, i) => i);
    expect(sizes(planTasks(pages(24), "ocr_blocks", 2, 4))).toEqual([4, 4, 4, 4, 4, 4]);
    expect(sizes(planTasks(pages(96), "ocr_blocks", 1, 4))).toEqual([24, 24, 24, 24]);
    expect(sizes(planTasks(pages(96), "ocr_blocks", 2, 4))).toEqual([12, 12, 12, 12, 12, 12, 12, 12]);
    expect(sizes(planTasks(pages(10), "ocr_blocks", 30, 4))).toEqual([5, 5]);
    expect(minTaskPages.ocr_blocks).toBe(4);
  });

  test("a 1,000-page job spreads over 30 workers; 5,000 pages stay within MAX_TASKS rows", () => {
    const thousand = planTasks(
      Array.from({ length: 1000 }, (_, i) => i),
      "ocr_blocks",
      30,
      4,
    )!;
    expect(thousand.length).toBeGreaterThanOrEqual(30);
    expect(thousand.length).toBeLessThanOrEqual(MAX_TASKS);
    const huge = planTasks(
      Array.from({ length: 5000 }, (_, i) => i),
      "ocr_blocks",
      1000,
      4,
    )!;
    expect(huge.length).toBeLessThanOrEqual(MAX_TASKS);
  });

  test("tasks are consecutive runs of the selected pages, sizes within one page, covering each page once", () => {
    const chosen = [1, 3, 4, 8, 9, 10, 15, 20, 21, 22, 30];
    const tasks = planTasks(chosen, "ocr_blocks", 2, 4)!;
    expect(tasks.flat()).toEqual(chosen);
    const s = sizes(tasks)!;
    expect(Math.max(...s) - Math.min(...s)).toBeLessThanOrEqual(1);
  });
});

describe("fanoutFamily and selectedPages", () => {
  test("OCR of a PDF is page-separable (blocks, searchable PDF); gundam, images and other operations are not", () => {
    expect(fanoutFamily("ocr", withDefaults("ocr", {}), "pdf")).toBe("ocr_blocks");
    expect(fanoutFamily("ocr", withDefaults("ocr", { output: "searchable_pdf" }), "pdf")).toBe("ocr_searchable");
    expect(fanoutFamily("searchable_pdf", withDefaults("searchable_pdf", {}), "pdf")).toBe("ocr_searchable");
    expect(fanoutFamily("ocr", withDefaults("ocr", { mode: "gundam" }), "pdf")).toBeNull();
    expect(fanoutFamily("ocr", withDefaults("ocr", {}), "png")).toBeNull();
    expect(fanoutFamily("convert", withDefaults("convert", { target: "jpg" }), "pdf")).toBe("pdf_to_jpg");
    expect(fanoutFamily("convert", withDefaults("convert", { target: "docx" }), "pdf")).toBeNull();
    expect(fanoutFamily("redact", withDefaults("redact", { regions: [] } as never), "pdf")).toBe("redact");
    expect(fanoutFamily("compress", withDefaults("compress", {}), "pdf")).toBeNull();
    expect(fanoutFamily("split", withDefaults("split", { mode: "every_page" } as never), "pdf")).toBeNull();
  });

  test("the pages a job reads: its pages option sorted without repeats, else every page; a redaction's, its regions' pages", () => {
    expect(selectedPages({}, 3)).toEqual([0, 1, 2]);
    expect(selectedPages({ pages: [5, 1, 5] }, 10)).toEqual([1, 5]);
    const region = (page: number) => ({ page, x: 0, y: 0, w: 1, h: 1 });
    expect(familyPages("redact", withDefaults("redact", { regions: [9, 2, 9].map(region) }), 10)).toEqual([2, 9]);
    expect(familyPages("ocr_blocks", withDefaults("ocr", {}), 2)).toEqual([0, 1]);
  });
});
