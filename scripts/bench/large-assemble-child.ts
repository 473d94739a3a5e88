// Child process of the large-document suite: the assembly of an OCR blocks job of `pages` pages
// split into `tasks` tasks, as the worker that finishes the last task runs it
// (worker/operations/ocr.ts ocrBlocksRunner.assemble), then the result serialised as the job's
// row receives it. The pages are those of a real OCR result (argv[2], a blocks JSON) repeated in
// order up to `pages`. Prints { bytes, idleMb, peakMb, ms } on stdout; the peak is this process's VmHWM
// (its own, read from /proc/self: a child's maxrss would start from its parent's).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { withDefaults } from "../../src/domain/operations";
import { ocrBlocksRunner } from "../../src/worker/operations/ocr";
import { memOf, resetPeak } from "./large-lib";

const [sourcePath, pagesArg, tasksArg] = process.argv.slice(2);
const pages = Number(pagesArg);
const tasks = Number(tasksArg);
const source = JSON.parse(readFileSync(sourcePath!, "utf8"));
const dir = mkdtempSync(join(tmpdir(), "large-assemble-"));
try {
  const partials = [];
  const per = Math.ceil(pages / tasks);
  for (let t = 0; t < tasks; t++) {
    const part = [];
    for (let p = t * per; p < Math.min(pages, (t + 1) * per); p++)
      part.push({ ...source.pages[p % source.pages.length], page: p });
    const path = join(dir, `partial-${t}`);
    writeFileSync(
      path,
      JSON.stringify({ engine: source.engine, unit: source.unit, origin: source.origin, pages: part }),
    );
    partials.push({ path, summary: {} });
  }
  Bun.gc(true);
  const idleMb = memOf(process.pid).rssMb;
  resetPeak(process.pid);
  const t0 = performance.now();
  const out = await ocrBlocksRunner.assemble(
    {
      jobId: "00000000-0000-0000-0000-000000000000",
      operation: "ocr",
      options: withDefaults("ocr", { output: "blocks" }),
      inputs: [],
      workDir: dir,
      control: { cancelled: false } as never,
      mode: "test",
    },
    partials,
  );
  const result = out.result as { type: "json"; json: unknown };
  // What completeJob hands the database driver: the result as one JSON text.
  const bytes = Buffer.byteLength(JSON.stringify(result.json));
  const ms = performance.now() - t0;
  console.log(JSON.stringify({ bytes, idleMb, peakMb: memOf(process.pid).hwmMb, ms }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
