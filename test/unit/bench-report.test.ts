// bench/REPORT.md is generated: it must be exactly the rendering of bench/report.json.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { readReport, renderReport, reportMdPath } from "../../scripts/bench/report";

const root = resolve(import.meta.dir, "../..");

test("REPORT.md is the rendering of report.json, never edited by hand", () => {
  expect(readFileSync(reportMdPath(root), "utf8")).toBe(renderReport(readReport(root)));
});
