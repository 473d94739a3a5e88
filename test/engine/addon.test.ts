// The native engine addon as the server uses it: async functions on file paths,
// errors carrying engine codes, JobControl for cancellation and progress, and work
// running off the JS thread. Needs `bun run build:native` first; uses the corpus
// (test/support/corpus.ts) and skips the tests that read it when it is absent.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createRequire } from "node:module";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { corpusDir, hasCorpus } from "../support/corpus";

const require = createRequire(import.meta.url);
const engine = require(path.join(import.meta.dir, "../../native/index.js"));

const corpus = (name: string) => path.join(corpusDir, "files", name);
const withCorpus = test.skipIf(!hasCorpus);

let scratch = "";
beforeAll(() => {
  scratch = mkdtempSync(path.join(tmpdir(), "engine-addon-"));
});
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});
const out = (name: string) => path.join(scratch, name);

/** Awaits a promise expected to reject and returns the error. */
async function rejection(p: Promise<unknown>): Promise<any> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error("expected the promise to reject");
}

describe("addon surface", () => {
  test("exports one async function per capability and JobControl", () => {
    for (const name of ["identify", "rotate", "reorder", "deletePages", "merge", "split", "protect", "unlock"]) {
      expect(typeof engine[name]).toBe("function");
    }
    const control = new engine.JobControl();
    expect(control.cancelled).toBe(false);
    expect(control.progress()).toEqual({ done: 0, total: 0 });
    control.cancel();
    expect(control.cancelled).toBe(true);
  });
});

describe("settings (configure)", () => {
  test("an unknown JPEG encoder or image pass is refused", () => {
    expect(() => engine.configure({ jpegEncoder: "mozjpeg" })).toThrow(/invalid_options/);
    expect(() => engine.configure({ compressImages: "ghostscript" })).toThrow(/invalid_options/);
  });

  test("settings are fixed once the engine has run: a later configure returns false", async () => {
    await rejection(engine.identify(out("no-such-file.pdf")));
    expect(engine.configure({ threads: 1 })).toBe(false);
  });
});

describe("identify", () => {
  withCorpus("reports kind, page count and encryption from the bytes", async () => {
    expect(await engine.identify(corpus("latex-outline-4-pages.pdf"))).toEqual({
      kind: "pdf",
      page_count: 4,
      encrypted: false,
      password_required: false,
    });
    const locked = await engine.identify(corpus("encrypted-libreoffice-rc4.pdf"));
    expect(locked).toMatchObject({ kind: "pdf", encrypted: true, password_required: true });
    expect(await engine.identify(corpus("malformed-header-only.pdf"))).toMatchObject({
      kind: "pdf",
      page_count: null,
      error: "invalid_pdf",
    });
    expect(await engine.identify(corpus("docx-tables.docx"))).toMatchObject({ kind: "docx", page_count: 1 });
    expect(await engine.identify(corpus("xlsx-merged-cells.xlsx"))).toMatchObject({ kind: "xlsx" });
    expect(await engine.identify(corpus("xlsx-password-protected.xlsx"))).toMatchObject({
      kind: "xlsx",
      encrypted: true,
      page_count: null,
    });
    expect(await engine.identify(corpus("gdp-by-country.csv"))).toMatchObject({ kind: "csv" });
    expect(await engine.identify(corpus("webp-alpha.webp"))).toMatchObject({ kind: "webp", page_count: 1 });
    expect(await engine.identify(corpus("deslant-scan.tif"))).toMatchObject({ kind: "unknown", page_count: null });
  });

  test("a missing file rejects with io_error", async () => {
    const err = await rejection(engine.identify("/nonexistent/input.pdf"));
    expect(err).toBeInstanceOf(Error);
    expect(err.code).toBe("io_error");
  });
});

describe("page operations", () => {
  withCorpus("rotate writes the output and reports pages and bytes", async () => {
    const target = out("rotated.pdf");
    const control = new engine.JobControl();
    const result = await engine.rotate(
      corpus("arabic-rotated-pages.pdf"),
      target,
      { degrees: 90, pages: [0, 2] },
      control,
    );
    expect(result).toEqual({ pages_processed: 4, page_count: 4, output_bytes: statSync(target).size });
    expect(control.progress()).toEqual({ done: 4, total: 4 });
    expect(await engine.identify(target)).toMatchObject({ kind: "pdf", page_count: 4 });
  });

  withCorpus("errors carry the engine code", async () => {
    const target = out("never.pdf");
    const locked = await rejection(engine.rotate(corpus("encrypted-libreoffice-rc4.pdf"), target, { degrees: 90 }));
    expect(locked.code).toBe("encrypted_input");
    expect(locked.message).toContain("unlock");
    const badAngle = await rejection(engine.rotate(corpus("latex-outline-4-pages.pdf"), target, { degrees: 45 }));
    expect(badAngle.code).toBe("invalid_options");
    const notPermutation = await rejection(
      engine.reorder(corpus("latex-outline-4-pages.pdf"), target, { order: [0, 0, 1, 2] }),
    );
    expect(notPermutation.code).toBe("invalid_options");
    const wrongPassword = await rejection(
      engine.unlock(corpus("encrypted-aes256-unicode-password.pdf"), target, { password: "nope" }),
    );
    expect(wrongPassword.code).toBe("invalid_password");
    expect(existsSync(target)).toBe(false);
  });

  withCorpus("unlock accepts a non-ASCII password", async () => {
    const target = out("unlocked.pdf");
    const r = await engine.unlock(corpus("encrypted-aes256-unicode-password.pdf"), target, { password: "pässwört" });
    expect(r.page_count).toBe(1);
    expect(await engine.identify(target)).toMatchObject({ kind: "pdf", encrypted: false });
  });

  withCorpus("split returns parts and merge concatenates", async () => {
    const zip = out("parts.zip");
    const s = await engine.split(corpus("scanned-mixed-3-pages.pdf"), zip, { mode: "chunks", chunk_size: 2 });
    expect(s).toEqual({ parts: 2, pages_processed: 3, output_bytes: statSync(zip).size });
    const merged = out("merged.pdf");
    const m = await engine.merge([corpus("scanned-mixed-3-pages.pdf"), corpus("latex-outline-4-pages.pdf")], merged);
    expect(m.page_count).toBe(7);
    const p = await engine.protect(corpus("scanned-mixed-3-pages.pdf"), out("protected.pdf"), { user_password: "pw" });
    expect(p.page_count).toBe(3);
    expect(await engine.identify(out("protected.pdf"))).toMatchObject({ encrypted: true, password_required: true });
  });
});

describe("cancellation", () => {
  withCorpus("a JobControl cancelled before start rejects with cancelled and writes nothing", async () => {
    const control = new engine.JobControl();
    control.cancel();
    const target = out("cancelled.pdf");
    const err = await rejection(engine.rotate(corpus("latex-outline-4-pages.pdf"), target, { degrees: 180 }, control));
    expect(err.code).toBe("cancelled");
    expect(existsSync(target)).toBe(false);
    expect(existsSync(`${target}.tmp`)).toBe(false);
  });

  withCorpus("cancelling during a split stops it at a page checkpoint", async () => {
    const control = new engine.JobControl();
    const target = out("cancelled-split.zip");
    const running = engine.split(corpus("freeculture-book-352-pages.pdf"), target, { mode: "every_page" }, control);
    const poll = setInterval(() => {
      if (control.progress().done > 0) control.cancel();
    }, 1);
    const err = await rejection(running);
    clearInterval(poll);
    expect(err.code).toBe("cancelled");
    const { done, total } = control.progress();
    expect(done).toBeLessThan(total);
    expect(readdirSync(scratch).filter((f) => f.startsWith("cancelled-split"))).toEqual([]);
  });
});

describe("threading", () => {
  withCorpus(
    "the JS thread stays responsive while a long split runs",
    async () => {
      const control = new engine.JobControl();
      let ticks = 0;
      const seenProgress = new Set<number>();
      const timer = setInterval(() => {
        ticks++;
        seenProgress.add(control.progress().done);
      }, 2);
      const started = performance.now();
      const result = await engine.split(
        corpus("freeculture-book-352-pages.pdf"),
        out("book.zip"),
        { mode: "every_page" },
        control,
      );
      const elapsed = performance.now() - started;
      clearInterval(timer);
      expect(result.parts).toBe(352);
      // Timers kept firing during the work (a blocked event loop would give ~0 ticks),
      // and they saw the page counter move.
      expect(ticks).toBeGreaterThan(Math.min(10, elapsed / 20));
      expect(seenProgress.size).toBeGreaterThan(2);
    },
    120_000,
  );

  withCorpus(
    "several operations run concurrently",
    async () => {
      const jobs = [0, 1, 2, 3].map((i) =>
        engine.rotate(corpus("geotopo-117-pages.pdf"), out(`concurrent-${i}.pdf`), { degrees: 90 * (1 + (i % 3)) }),
      );
      const results = await Promise.all(jobs);
      for (const r of results) expect(r.page_count).toBe(117);
    },
    120_000,
  );
});
