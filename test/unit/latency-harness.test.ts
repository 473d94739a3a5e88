// The pure parts of the per-page latency harness (scripts/bench/latency-lib.ts, parseOptions of
// scripts/bench/latency.ts): the open-loop schedule, percentiles, per-operation statistics, the
// knee of a sweep, the --mix syntax, the seeded job choice and the synthetic input PDFs.
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  findKnee,
  greyImage,
  imagePdf,
  opStats,
  pageLines,
  parseMix,
  parseRates,
  percentile,
  pickEntry,
  prng,
  schedule,
  textPdf,
  type JobRecord,
} from "../../scripts/bench/latency-lib";
import { parseOptions } from "../../scripts/bench/latency-options";

describe("open-loop schedule", () => {
  test("job i is due at i / rate seconds after the start", () => {
    expect(schedule(2, 3)).toEqual([0, 500, 1000, 1500, 2000, 2500]);
    expect(schedule(0.5, 10)).toEqual([0, 2000, 4000, 6000, 8000]);
  });
  test("every job due before the duration ends is scheduled, and none at or after it", () => {
    expect(schedule(0.3, 10).length).toBe(3); // 0, 3.33, 6.67 s: 10 s is not included
    expect(schedule(0.3, 10.5).length).toBe(4);
    expect(schedule(3, 1).at(-1)).toBeCloseTo(666.67, 1);
    for (const [rate, d] of [
      [0.7, 13],
      [4, 20],
      [1.5, 2],
    ] as const) {
      const s = schedule(rate, d);
      expect(s.every((t) => t < d * 1000)).toBe(true);
      expect(s.length).toBe(Math.floor(rate * d - 1e-9) + 1);
    }
  });
  test("a rate or duration of zero schedules nothing", () => {
    expect(schedule(0, 10)).toEqual([]);
    expect(schedule(1, 0)).toEqual([]);
  });
});

describe("percentiles", () => {
  test("nearest rank: the smallest value with at least p% of the values at or below it", () => {
    const v = [10, 1, 9, 2, 8, 3, 7, 4, 6, 5];
    expect(percentile(v, 50)).toBe(5);
    expect(percentile(v, 95)).toBe(10);
    expect(percentile(v, 0)).toBe(1);
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 95)).toBe(95);
    expect(percentile([7], 99)).toBe(7);
  });
  test("the percentile of no values is NaN, not 0", () => {
    expect(percentile([], 50)).toBeNaN();
  });
});

describe("knee of a sweep", () => {
  test("the knee is the lowest rate whose p95 per-page latency is at least twice the lowest rate's", () => {
    const k = findKnee([
      { rate: 0.5, p95: 100 },
      { rate: 1, p95: 150 },
      { rate: 2, p95: 250 },
      { rate: 4, p95: 900 },
    ]);
    expect(k).toEqual({ rate: 2, baseline_rate: 0.5, baseline_p95_ms: 100, threshold_ms: 200 });
  });
  test("exactly double counts as reached", () => {
    expect(
      findKnee([
        { rate: 1, p95: 100 },
        { rate: 2, p95: 200 },
      ]).rate,
    ).toBe(2);
  });
  test("not reached when every rate stays below double", () => {
    expect(
      findKnee([
        { rate: 1, p95: 100 },
        { rate: 2, p95: 199.9 },
        { rate: 3, p95: 150 },
      ]).rate,
    ).toBeNull();
  });
  test("rates are compared in ascending order whatever order the sweep ran them in", () => {
    const k = findKnee([
      { rate: 4, p95: 500 },
      { rate: 2, p95: 300 },
      { rate: 1, p95: 120 },
    ]);
    expect(k.baseline_rate).toBe(1);
    expect(k.rate).toBe(2);
  });
  test("a rate at which no job completed is past the knee", () => {
    expect(
      findKnee([
        { rate: 1, p95: 100 },
        { rate: 2, p95: 120 },
        { rate: 4, p95: NaN },
      ]).rate,
    ).toBe(4);
  });
  test("no job completed at the lowest rate: no baseline, no knee", () => {
    const k = findKnee([
      { rate: 1, p95: NaN },
      { rate: 2, p95: 500 },
    ]);
    expect(k.rate).toBeNull();
    expect(k.note).toContain("no baseline");
  });
});

describe("--mix", () => {
  test("operation:pages=weight entries, weights normalised to sum 1", () => {
    const m = parseMix("ocr:1=0.3,rotate:10=0.3,compress:5=0.2,convert-jpg:3=0.2");
    expect(m.map((e) => `${e.op}:${e.pages}`)).toEqual(["ocr:1", "rotate:10", "compress:5", "convert-jpg:3"]);
    expect(m.reduce((a, e) => a + e.weight, 0)).toBeCloseTo(1, 12);
    const n = parseMix("rotate:1=3, ocr:2=1");
    expect(n.map((e) => e.weight)).toEqual([0.75, 0.25]);
  });
  test("unknown operations, bad syntax, pages out of range, zero weights and repeats are refused", () => {
    expect(() => parseMix("resize:1=1")).toThrow(/unknown operation/);
    expect(() => parseMix("rotate=1")).toThrow(/operation:pages=weight/);
    expect(() => parseMix("rotate:1")).toThrow(/operation:pages=weight/);
    expect(() => parseMix("rotate:0=1")).toThrow(/pages must be/);
    expect(() => parseMix("rotate:101=1", 100)).toThrow(/pages must be 1..100/);
    expect(() => parseMix("rotate:1=0")).toThrow(/above 0/);
    expect(() => parseMix("rotate:1=1,rotate:1=2")).toThrow(/twice/);
    expect(() => parseMix("")).toThrow(/empty/);
  });
  test("the same seed draws the same jobs, and the draws follow the weights", () => {
    const m = parseMix("rotate:1=0.7,ocr:1=0.2,compress:5=0.1");
    const draw = (seed: number, n: number) => {
      const r = prng(seed);
      return Array.from({ length: n }, () => pickEntry(m, r()).op);
    };
    expect(draw(42, 50)).toEqual(draw(42, 50));
    expect(draw(42, 50)).not.toEqual(draw(43, 50));
    const big = draw(7, 100_000);
    const share = (op: string) => big.filter((o) => o === op).length / big.length;
    expect(Math.abs(share("rotate") - 0.7)).toBeLessThan(0.01);
    expect(Math.abs(share("ocr") - 0.2)).toBeLessThan(0.01);
    expect(Math.abs(share("compress") - 0.1)).toBeLessThan(0.01);
  });
  test("a draw falls on the entry whose cumulative weight band holds it", () => {
    const m = parseMix("rotate:1=1,ocr:1=1");
    expect(pickEntry(m, 0).op).toBe("rotate");
    expect(pickEntry(m, 0.4999).op).toBe("rotate");
    expect(pickEntry(m, 0.5).op).toBe("ocr");
    expect(pickEntry(m, 0.99999).op).toBe("ocr");
  });
});

describe("command line", () => {
  test("a key is required, from --key, --keys-file or DOCPROC_KEY", () => {
    expect(() => parseOptions(["--rate", "1"], {})).toThrow(/--key is required/);
    expect(parseOptions(["--rate", "1"], { DOCPROC_KEY: "a,b" }).keys).toEqual(["a", "b"]);
    expect(parseOptions(["--rate", "1", "--key", "a,b", "--key", "c", "--key", "a"], {}).keys).toEqual(["a", "b", "c"]);
  });
  test("--rate or --sweep, not both; defaults as documented", () => {
    expect(() => parseOptions(["--key", "k"], {})).toThrow(/--rate or --sweep/);
    expect(() => parseOptions(["--key", "k", "--rate", "1", "--sweep", "1,2"], {})).toThrow(/not both/);
    const o = parseOptions(["--key", "k", "--sweep", "0.5,1,2,4"], {});
    expect(o.rates).toEqual([0.5, 1, 2, 4]);
    expect(o.sweep).toBe(true);
    expect(o.url).toBe("http://127.0.0.1:8080/api/v1");
    expect([o.durationS, o.drainS, o.pollMs, o.maxOutstanding, o.poll]).toEqual([60, 120, 100, 500, "list"]);
    expect(() => parseRates("1,-2")).toThrow();
    expect(() => parseOptions(["--key", "k", "--rate", "1", "--url", "ftp://x"], {})).toThrow(/http/);
  });
});

function job(over: Partial<JobRecord>): JobRecord {
  return { i: 0, op: "rotate", pages: 1, scheduledMs: 0, ...over };
}

describe("per-operation statistics", () => {
  test("per-page latency is (result answered - scheduled submission) / pages", () => {
    const s = opStats("rotate", [
      job({ pages: 10, scheduledMs: 1000, sentMs: 1005, answeredMs: 1010, resultMs: 3000, outcome: "ok" }),
      job({ pages: 2, scheduledMs: 2000, sentMs: 2000, answeredMs: 2004, resultMs: 2400, outcome: "ok" }),
    ]);
    expect(s.per_page_ms.p50).toBe(200); // 2000 ms / 10 pages and 400 ms / 2 pages
    expect(s.job_ms.p95).toBe(2000);
    expect(s.job_ms.p50).toBe(400);
    expect(s.submit_ms.p50).toBe(4);
  });
  test("latency counts from the scheduled time, so a late send cannot hide latency", () => {
    const s = opStats("rotate", [job({ scheduledMs: 0, sentMs: 900, answeredMs: 910, resultMs: 1000, outcome: "ok" })]);
    expect(s.job_ms.p50).toBe(1000);
  });
  test("a 429 on submission counts as a 429 and as an error by code, never as completed", () => {
    const s = opStats("ocr", [
      job({ op: "ocr", httpStatus: 429, outcome: "error", code: "rate_limited" }),
      job({ op: "ocr", httpStatus: 429, outcome: "error", code: "concurrency_limit" }),
      job({ op: "ocr", httpStatus: 202, outcome: "error", code: "ocr_failed" }),
      job({ op: "ocr", outcome: "unfinished", code: "drain_timeout" }),
    ]);
    expect(s.http_429).toBe(2);
    expect(s.ok).toBe(0);
    expect(s.errors).toEqual({ rate_limited: 1, concurrency_limit: 1, ocr_failed: 1, drain_timeout: 1 });
    expect(s.per_page_ms.p50).toBeNaN();
    expect(s.throughput_pages_per_s).toBeNaN();
  });
  test("throughput is pages completed / (last completion - first scheduled submission)", () => {
    const s = opStats("all", [
      job({ pages: 5, scheduledMs: 0, resultMs: 2000, outcome: "ok" }),
      job({ pages: 3, scheduledMs: 1000, resultMs: 4000, outcome: "ok" }),
      job({ pages: 9, scheduledMs: 500, outcome: "error", code: "rate_limited", httpStatus: 429 }),
    ]);
    expect(s.pages_completed).toBe(8);
    expect(s.throughput_pages_per_s).toBe(2); // 8 pages over 4 s
  });
  test("queue wait is started_at - created_at of the job object", () => {
    const s = opStats("rotate", [
      job({
        resultMs: 500,
        outcome: "ok",
        createdAt: "2026-01-01T00:00:00.000Z",
        startedAt: "2026-01-01T00:00:00.120Z",
      }),
      job({
        resultMs: 500,
        outcome: "ok",
        createdAt: "2026-01-01T00:00:01.000Z",
        startedAt: "2026-01-01T00:00:01.080Z",
      }),
    ]);
    expect(s.queue_wait_ms_mean).toBe(100);
  });
});

const qpdf = spawnSync("qpdf", ["--version"]).status === 0;

describe("synthetic inputs", () => {
  test("every text page differs and fits the page's 46 lines of at most ~90 characters", () => {
    const a = pageLines(1, 0);
    const b = pageLines(1, 1);
    expect(a).not.toEqual(b);
    expect(pageLines(1, 0)).toEqual(a);
    expect(a.length).toBe(46);
    expect(Math.max(...a.map((l) => l.length))).toBeLessThan(95);
  });
  test("a text PDF's xref offsets point at its objects and it has the asked pages", () => {
    const pdf = Buffer.from(textPdf(3, 5)).toString("latin1");
    expect(pdf).toContain("/Count 3");
    const xref = Number(/startxref\n(\d+)/.exec(pdf)![1]);
    const offsets = pdf
      .slice(xref)
      .split("\n")
      .filter((l) => / 00000 n $/.test(l))
      .map((l) => Number(l.slice(0, 10)));
    expect(offsets.length).toBe(3 + 3 * 2);
    offsets.forEach((o, i) => expect(pdf.slice(o, o + `${i + 1} 0 obj`.length)).toBe(`${i + 1} 0 obj`));
  });
  test("an image PDF holds one full-page grey image per page", () => {
    const px = new Uint8Array(20 * 30).fill(255);
    const pdf = Buffer.from(imagePdf([greyImage(px, 20, 30), greyImage(px, 20, 30)])).toString("latin1");
    expect(pdf).toContain("/Count 2");
    expect(pdf.match(/\/Subtype \/Image \/Width 20 \/Height 30 \/ColorSpace \/DeviceGray/g)?.length).toBe(2);
    expect(() => greyImage(px, 21, 30)).toThrow(/needs/);
  });
  test.skipIf(!qpdf)("qpdf --check accepts both generated PDFs (skipped without qpdf)", () => {
    const dir = mkdtempSync(join(tmpdir(), "latency-t-"));
    try {
      const px = new Uint8Array(40 * 50).map((_, i) => (i % 7 ? 255 : 0));
      for (const [name, bytes] of [
        ["t.pdf", textPdf(4, 2)],
        ["i.pdf", imagePdf([greyImage(px, 40, 50)])],
      ] as const) {
        writeFileSync(join(dir, name), bytes);
        const r = spawnSync("qpdf", ["--check", join(dir, name)], { encoding: "utf8" });
        expect(`${name}: ${r.status} ${r.stdout}${r.stderr}`).toMatch(new RegExp(`^${name.replace(".", "\\.")}: 0 `));
        expect(r.stdout).toContain("No syntax or stream encoding errors");
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
