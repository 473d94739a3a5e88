// The API spec (docs/api.md), Limits (jobs queued or running per key: 2; pages per job: 100 in sandbox, the
// plan's cap in live) and Errors (429 concurrency_limit with Retry-After, 422
// page_limit_exceeded); issue 3, point 5.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { client, expectEnvelope, hasCorpus } from "../support/service";
import { useService } from "../support/use-service";
import { createJob, keyFor, makePdf, npages, tempDir, uploadOk, waitJobRow } from "../support/jobs";
import { limits } from "../../src/domain/pricing";

const svc = useService({ workers: 1, env: { JOB_TEST_PAGE_DELAY_MS: "200" } }, 60_000);
let tmp: ReturnType<typeof tempDir>;

beforeAll(async () => {
  tmp = tempDir();
}, 60_000);
afterAll(async () => {
  tmp?.cleanup();
}, 60_000);

describe("concurrency: at most 2 queued or running jobs per key", () => {
  test.skipIf(!hasCorpus)(
    "a third job: 429 concurrency_limit with Retry-After; nothing created; a slot frees when a job ends",
    async () => {
      const { key, accountId } = await svc.newKey();
      const call = client(svc.baseUrl, key);
      const slow = await uploadOk(
        svc,
        key,
        makePdf(tmp.dir, "slow-20.pdf", [{ file: "geotopo-117-pages.pdf", range: "1-20" }]),
      );
      const body = { operation: "rotate", file_id: slow.id, options: { degrees: 90 } };
      const first = await createJob(svc, key, body);
      const second = await createJob(svc, key, body);
      await waitJobRow(svc, first.id, ["running"], 10_000);

      const r = await call("POST", "/jobs", body);
      const e = expectEnvelope(r, 429, "concurrency_limit");
      expect(e.type).toBe("rate_limit_error");
      const retryAfter = r.headers.get("retry-after");
      expect(retryAfter).toMatch(/^\d+$/);
      expect(Number(retryAfter)).toBeGreaterThan(0);
      expect((await svc.sql`SELECT count(*)::int AS n FROM jobs WHERE account_id = ${accountId}`)[0]!.n).toBe(2);

      // Another key of the same account has its own allowance.
      const other = await keyFor(svc, accountId, "test");
      const third = await client(svc.baseUrl, other.key)("POST", "/jobs", body);
      expect(third.status).toBe(202);

      // Cancelling the queued job frees a slot at once.
      expect((await call("POST", `/jobs/${second.id}/cancel`)).json.status).toBe("cancelled");
      const fourth = await call("POST", "/jobs", body);
      expect(fourth.status).toBe(202);
      expectEnvelope(await call("POST", "/jobs", body), 429, "concurrency_limit");

      for (const id of [first.id, fourth.json.id]) await call("POST", `/jobs/${id}/cancel`);
      await client(svc.baseUrl, other.key)("POST", `/jobs/${third.json.id}/cancel`);
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "finished jobs do not count",
    async () => {
      const { key } = await svc.newKey();
      const f = await uploadOk(svc, key, "scanned-huckfinn-page.pdf");
      const body = { operation: "rotate", file_id: f.id, options: { degrees: 90 } };
      for (let i = 0; i < 3; i++) {
        const j = await createJob(svc, key, body);
        await waitJobRow(svc, j.id, ["succeeded"], 15_000);
      }
      const active = await Promise.all([createJob(svc, key, body), createJob(svc, key, body)]);
      expect(active.length).toBe(2);
      expectEnvelope(await client(svc.baseUrl, key)("POST", "/jobs", body), 429, "concurrency_limit");
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "the limit holds under a burst of concurrent requests",
    async () => {
      const { key, accountId } = await svc.newKey();
      const f = await uploadOk(svc, key, "scanned-huckfinn-page.pdf");
      const body = { operation: "rotate", file_id: f.id, options: { degrees: 90 } };
      const all = await Promise.all(Array.from({ length: 8 }, () => client(svc.baseUrl, key)("POST", "/jobs", body)));
      const statuses = all.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 202).length).toBe(2);
      expect(statuses.filter((s) => s === 429).length).toBe(6);
      for (const r of all.filter((x) => x.status === 429)) expect(r.json.error.code).toBe("concurrency_limit");
      expect((await svc.sql`SELECT count(*)::int AS n FROM jobs WHERE account_id = ${accountId}`)[0]!.n).toBe(2);
    },
    60_000,
  );
});

describe("pages per job", () => {
  test.skipIf(!hasCorpus)(
    "sandbox: 100 pages at most — the 117-page PDF is 422 page_limit_exceeded, a 100-page one is accepted",
    async () => {
      expect(limits.test.pages_per_job).toBe(100);
      const { key, accountId } = await svc.newKey();
      const call = client(svc.baseUrl, key);
      const big = await uploadOk(svc, key, "geotopo-117-pages.pdf");
      expect(big.page_count).toBe(117);
      for (const body of [
        { operation: "rotate", file_id: big.id, options: { degrees: 90 } },
        { operation: "split", file_id: big.id },
        { operation: "protect", file_id: big.id, options: { user_password: "x" } },
      ]) {
        const e = expectEnvelope(await call("POST", "/jobs", body), 422, "page_limit_exceeded");
        expect(e.type).toBe("invalid_request_error");
        expect(e.param).toBe("file_id");
        expect(e.message).toContain("117");
      }
      expect((await svc.sql`SELECT count(*)::int AS n FROM jobs WHERE account_id = ${accountId}`)[0]!.n).toBe(0);

      const hundredPath = makePdf(tmp.dir, "hundred.pdf", [{ file: "geotopo-117-pages.pdf", range: "1-100" }]);
      expect(npages(hundredPath)).toBe(100);
      const hundred = await uploadOk(svc, key, hundredPath);
      const ok = await call("POST", "/jobs", { operation: "rotate", file_id: hundred.id, options: { degrees: 90 } });
      expect(ok.status).toBe(202);
      expect(ok.json.credits.pages_estimated).toBe(100);
      await call("POST", `/jobs/${ok.json.id}/cancel`);
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "sandbox merge: the inputs' pages add up against the cap",
    async () => {
      const { key } = await svc.newKey();
      const call = client(svc.baseUrl, key);
      const sixty = await uploadOk(
        svc,
        key,
        makePdf(tmp.dir, "sixty.pdf", [{ file: "geotopo-117-pages.pdf", range: "1-60" }]),
      );
      const forty = await uploadOk(
        svc,
        key,
        makePdf(tmp.dir, "forty.pdf", [{ file: "geotopo-117-pages.pdf", range: "61-100" }]),
      );
      expect(
        expectEnvelope(
          await call("POST", "/jobs", { operation: "merge", file_ids: [sixty.id, sixty.id] }),
          422,
          "page_limit_exceeded",
        ).param,
      ).toBe("file_ids");
      const ok = await call("POST", "/jobs", { operation: "merge", file_ids: [sixty.id, forty.id] });
      expect(ok.status).toBe(202);
      expect(ok.json.credits.pages_estimated).toBe(100);
      await call("POST", `/jobs/${ok.json.id}/cancel`);
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    `live: the plan's cap (${limits.live.pages_per_job} pages) — above it 422, the 117-page PDF is fine`,
    async () => {
      const sandbox = await svc.newKey();
      const live = await keyFor(svc, sandbox.accountId, "live");
      const call = client(svc.baseUrl, live.key);
      const big = await uploadOk(svc, live.key, "geotopo-117-pages.pdf");
      const ok = await call("POST", "/jobs", { operation: "rotate", file_id: big.id, options: { degrees: 90 } });
      expect(ok.status).toBe(202);
      expect(ok.json.credits.billed).toBe(false);
      await call("POST", `/jobs/${ok.json.id}/cancel`);

      const copies = Math.ceil((limits.live.pages_per_job + 1) / 352);
      const hugePath = makePdf(
        tmp.dir,
        "huge.pdf",
        Array.from({ length: copies }, () => ({ file: "freeculture-book-352-pages.pdf" })),
      );
      const huge = await uploadOk(svc, live.key, hugePath);
      expect(huge.page_count).toBe(352 * copies);
      expect(huge.page_count).toBeGreaterThan(limits.live.pages_per_job);
      const e = expectEnvelope(
        await call("POST", "/jobs", { operation: "rotate", file_id: huge.id, options: { degrees: 90 } }),
        422,
        "page_limit_exceeded",
      );
      expect(e.param).toBe("file_id");
    },
    60_000,
  );
});
