// Page-parallel pdf -> jpg (issue 39; docs/scaling.md, "Page-parallel jobs") at the addon: the
// ZIPs renderJpeg writes for consecutive page ranges, joined by renderJoin in page order, are the
// ZIP one renderJpeg of all those pages writes, byte for byte. Needs `bun run build:native` and
// the corpus.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createRequire } from "node:module";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { corpusDir, hasCorpus } from "../support/corpus";

const require = createRequire(import.meta.url);
const engine = require(path.join(import.meta.dir, "../../native/index.js"));

let scratch = "";
beforeAll(() => {
  scratch = mkdtempSync(path.join(tmpdir(), "engine-render-join-"));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

test.skipIf(!hasCorpus)(
  "ZIPs of page ranges joined in order are the whole run's ZIP, byte for byte",
  async () => {
    const input = path.join(corpusDir, "files/geotopo-117-pages.pdf");
    const pages = Array.from({ length: 12 }, (_, i) => i + 3);
    const whole = path.join(scratch, "whole.zip");
    await engine.renderJpeg(input, whole, { pages, dpi: 40 });
    const parts: string[] = [];
    for (const [i, range] of [pages.slice(0, 5), pages.slice(5, 9), pages.slice(9)].entries()) {
      const part = path.join(scratch, `part-${i}.zip`);
      await engine.renderJpeg(input, part, { pages: range, dpi: 40 });
      parts.push(part);
    }
    const joined = path.join(scratch, "joined.zip");
    const bytes = await engine.renderJoin(parts, joined);
    expect(bytes).toBe(readFileSync(joined).length);
    expect(Buffer.compare(readFileSync(joined), readFileSync(whole))).toBe(0);
  },
  120_000,
);

test("renderJoin of a file that is not a ZIP rejects with io_error", async () => {
  const e = await engine.renderJoin([import.meta.path], path.join(scratch, "x.zip")).catch((e: any) => e);
  expect(e.code).toBe("io_error");
});
