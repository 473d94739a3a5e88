// The API spec (docs/api.md), Jobs (creation request, catalogue and options), Errors and Limits; issue 3, point 2:
// POST /jobs validation over real HTTP — unsupported names (422 operation_unsupported, param
// operation), bad options (422 invalid_options naming the option), metadata (20 string keys),
// file_id / file_ids rules, unknown (404) and other-mode (403) files — and GET /jobs with its
// status filter and pagination, GET /jobs/{id}, the job's kind and progress fields.
import { beforeAll, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { client, expectEnvelope } from "../support/service";
import { useService } from "../support/use-service";
import { makePdf } from "../support/make-pdf";
import { pngHeader } from "../support/pdf";
import { keyFor, uploadBytes } from "../support/jobs";
import { convertPairs, operations } from "../../src/domain/operations";

const svc = useService({ workers: 1 }, 60_000);
// One sandbox account with a 4-page PDF, a PNG and a live-mode PDF; keys are made per test.
let accountId: string;
let pdf4: any;
let pdf1: any;
let png: any;
let livePdf: any;

beforeAll(async () => {
  const k = await svc.newKey();
  accountId = k.accountId;
  pdf4 = (await uploadBytes(svc, k.key, makePdf(4), "four.pdf", "application/pdf")).json;
  pdf1 = (await uploadBytes(svc, k.key, makePdf(1), "one.pdf", "application/pdf")).json;
  png = (await uploadBytes(svc, k.key, pngHeader(), "header.png", "image/png")).json;
  const live = await keyFor(svc, accountId, "live");
  livePdf = (await uploadBytes(svc, live.key, makePdf(1), "one.pdf", "application/pdf")).json;
}, 60_000);

/** A fresh sandbox key on the shared account (own token bucket, own 2-job allowance). */
async function call() {
  const k = await keyFor(svc, accountId, "test");
  return client(svc.baseUrl, k.key);
}

async function jobCount(): Promise<number> {
  return (await svc.sql`SELECT count(*)::int AS n FROM jobs WHERE account_id = ${accountId}`)[0]!.n;
}

describe("operation names", () => {
  test("watermark, flatten and sign: 422 operation_unsupported, param operation, with a reason", async () => {
    const c = await call();
    const before = await jobCount();
    for (const operation of ["watermark", "flatten", "sign"]) {
      const e = expectEnvelope(await c("POST", "/jobs", { operation, file_id: pdf4.id }), 422, "operation_unsupported");
      expect(e.param).toBe("operation");
      expect(e.type).toBe("invalid_request_error");
      expect(e.message).toContain(operation);
    }
    expect(await jobCount()).toBe(before);
  }, 60_000);

  // Bodies valid in every other respect, for each operation that may lack an executor.
  const templates: Record<string, Record<string, unknown>> = {
    ocr: { operation: "ocr" },
    searchable_pdf: { operation: "searchable_pdf" },
    convert: { operation: "convert", options: { target: "docx" } },
    compress: { operation: "compress", options: { level: "strong" } },
    redact: { operation: "redact", options: { regions: [{ page: 0, x: 1, y: 1, w: 10, h: 10 }] } },
  };
  const unavailable = Object.values(operations)
    .filter((o) => !o.available)
    .map((o) => o.name);

  test.skipIf(unavailable.length === 0)(
    `operations without an executor (now: ${unavailable.join(", ")}): 422 operation_unsupported, never a fake result`,
    async () => {
      const c = await call();
      const before = await jobCount();
      for (const name of unavailable) {
        const e = expectEnvelope(
          await c("POST", "/jobs", { file_id: pdf4.id, ...templates[name] }),
          422,
          "operation_unsupported",
        );
        expect({ name, param: e.param }).toEqual({ name, param: "operation" });
      }
      expect(await jobCount()).toBe(before);
    },
    60_000,
  );

  test("a convert pair from PDF without a converter: 422 operation_unsupported", async () => {
    const c = await call();
    for (const pair of convertPairs.filter((p) => p.from === "pdf" && !p.available)) {
      expect(
        expectEnvelope(
          await c("POST", "/jobs", { operation: "convert", file_id: pdf4.id, options: { target: pair.to } }),
          422,
          "operation_unsupported",
        ).param,
      ).toBe("operation");
    }
    // PDF to xlsx is no pair at all.
    expect(
      expectEnvelope(
        await c("POST", "/jobs", { operation: "convert", file_id: pdf4.id, options: { target: "xlsx" } }),
        422,
        "operation_unsupported",
      ).param,
    ).toBe("operation");
  }, 60_000);

  test("convert targets pptx, png, html and txt: 422 operation_unsupported, param operation", async () => {
    const c = await call();
    for (const target of ["pptx", "png", "html", "txt"]) {
      expect(
        expectEnvelope(
          await c("POST", "/jobs", { operation: "convert", file_id: pdf4.id, options: { target } }),
          422,
          "operation_unsupported",
        ).param,
      ).toBe("operation");
    }
  }, 60_000);

  test("an unknown or missing operation: 422 validation_error, param operation", async () => {
    const c = await call();
    for (const body of [
      { operation: "frobnicate", file_id: pdf4.id },
      { operation: "constructor", file_id: pdf4.id },
      { operation: "", file_id: pdf4.id },
      { file_id: pdf4.id },
      { operation: 5, file_id: pdf4.id },
    ]) {
      expect(expectEnvelope(await c("POST", "/jobs", body), 422, "validation_error").param).toBe("operation");
    }
  }, 60_000);
});

describe("options (422 invalid_options naming the option)", () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ["rotate degrees 45", { operation: "rotate", options: { degrees: 45 } }, "options.degrees"],
    ["rotate degrees as a string", { operation: "rotate", options: { degrees: "90" } }, "options.degrees"],
    ["rotate without degrees", { operation: "rotate", options: {} }, "options.degrees"],
    ["rotate a page past the end", { operation: "rotate", options: { degrees: 90, pages: [4] } }, "options.pages"],
    [
      "rotate an unknown option",
      { operation: "rotate", options: { degrees: 90, clockwise: true } },
      "options.clockwise",
    ],
    ["reorder not a permutation", { operation: "reorder", options: { order: [0, 0, 1, 2] } }, "options.order"],
    ["reorder too short", { operation: "reorder", options: { order: [2, 1, 0] } }, "options.order"],
    ["delete every page", { operation: "delete_pages", options: { pages: [0, 1, 2, 3] } }, "options.pages"],
    ["delete a page past the end", { operation: "delete_pages", options: { pages: [9] } }, "options.pages"],
    [
      "split ranges out of range",
      {
        operation: "split",
        options: {
          mode: "ranges",
          ranges: [
            [1, 2],
            [3, 5],
          ],
        },
      },
      "options.ranges[1]",
    ],
    [
      "split range start after end",
      { operation: "split", options: { mode: "ranges", ranges: [[3, 2]] } },
      "options.ranges[0]",
    ],
    ["split ranges without mode ranges", { operation: "split", options: { ranges: [[1, 2]] } }, "options.ranges"],
    ["split chunks without chunk_size", { operation: "split", options: { mode: "chunks" } }, "options.chunk_size"],
    ["split unknown mode", { operation: "split", options: { mode: "halves" } }, "options.mode"],
    ["protect without a password", { operation: "protect", options: { allow_print: false } }, "options.user_password"],
    [
      "protect permission not boolean",
      { operation: "protect", options: { user_password: "x", allow_print: "no" } },
      "options.allow_print",
    ],
    ["unlock unknown option", { operation: "unlock", options: { owner_password: "x" } }, "options.owner_password"],
  ];

  test.each(cases)(
    "%s",
    async (_name, body, param) => {
      const c = await call();
      const before = await jobCount();
      const e = expectEnvelope(await c("POST", "/jobs", { file_id: pdf4.id, ...body }), 422, "invalid_options");
      expect(e.param).toBe(param);
      expect(e.type).toBe("invalid_request_error");
      expect(await jobCount()).toBe(before);
    },
    60_000,
  );

  test("merge takes no options", async () => {
    const c = await call();
    expect(
      expectEnvelope(
        await c("POST", "/jobs", { operation: "merge", file_ids: [pdf4.id, pdf4.id], options: { order: [1, 0] } }),
        422,
        "invalid_options",
      ).param,
    ).toBe("options.order");
  }, 60_000);

  test("options must be an object or null", async () => {
    const c = await call();
    expectEnvelope(
      await c("POST", "/jobs", { operation: "rotate", file_id: pdf4.id, options: [90] }),
      422,
      "validation_error",
    );
    expectEnvelope(
      await c("POST", "/jobs", { operation: "rotate", file_id: pdf4.id, options: "90" }),
      422,
      "validation_error",
    );
    // null options = no options: rotate then lacks degrees.
    expect(
      expectEnvelope(
        await c("POST", "/jobs", { operation: "rotate", file_id: pdf4.id, options: null }),
        422,
        "invalid_options",
      ).param,
    ).toBe("options.degrees");
  }, 60_000);
});

describe("metadata (up to 20 string keys)", () => {
  test("21 keys: 422 validation_error on metadata; 20 keys: 202 and echoed", async () => {
    const c = await call();
    const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, `v${i}`]));
    expect(
      expectEnvelope(
        await c("POST", "/jobs", {
          operation: "rotate",
          file_id: pdf4.id,
          options: { degrees: 90 },
          metadata: many(21),
        }),
        422,
        "validation_error",
      ).param,
    ).toBe("metadata");
    const ok = await c("POST", "/jobs", {
      operation: "rotate",
      file_id: pdf4.id,
      options: { degrees: 90 },
      metadata: many(20),
    });
    expect(ok.status).toBe(202);
    expect(ok.json.metadata).toEqual(many(20));
    expect((await c("GET", `/jobs/${ok.json.id}`)).json.metadata).toEqual(many(20));
  }, 60_000);

  test("non-string values: 422 validation_error on metadata", async () => {
    const c = await call();
    for (const value of [1, true, null, { a: "b" }, ["x"]]) {
      const e = expectEnvelope(
        await c("POST", "/jobs", {
          operation: "rotate",
          file_id: pdf4.id,
          options: { degrees: 90 },
          metadata: { order: "42", ref: value },
        }),
        422,
        "validation_error",
      );
      expect(["metadata", "metadata.ref"]).toContain(e.param);
    }
  }, 60_000);

  test("metadata must be an object; null or absent means none", async () => {
    const c = await call();
    expect(
      expectEnvelope(
        await c("POST", "/jobs", { operation: "rotate", file_id: pdf4.id, options: { degrees: 90 }, metadata: "x" }),
        422,
        "validation_error",
      ).param,
    ).toBe("metadata");
    const r = await c("POST", "/jobs", {
      operation: "rotate",
      file_id: pdf4.id,
      options: { degrees: 90 },
      metadata: null,
    });
    expect(r.status).toBe(202);
    expect(r.json.metadata).toEqual({});
  }, 60_000);
});

describe("inputs", () => {
  test("merge: file_ids with 2 to 50 items, never file_id", async () => {
    const c = await call();
    expect(
      expectEnvelope(await c("POST", "/jobs", { operation: "merge", file_ids: [pdf4.id] }), 422, "validation_error")
        .param,
    ).toBe("file_ids");
    expect(
      expectEnvelope(await c("POST", "/jobs", { operation: "merge", file_ids: [] }), 422, "validation_error").param,
    ).toBe("file_ids");
    expect(
      expectEnvelope(
        await c("POST", "/jobs", { operation: "merge", file_ids: Array(51).fill(pdf4.id) }),
        422,
        "validation_error",
      ).param,
    ).toBe("file_ids");
    expect(expectEnvelope(await c("POST", "/jobs", { operation: "merge" }), 422, "validation_error").param).toBe(
      "file_ids",
    );
    expect(
      expectEnvelope(await c("POST", "/jobs", { operation: "merge", file_id: pdf4.id }), 422, "validation_error").param,
    ).toBe("file_id");
    expect(["file_ids", "file_ids[1]"]).toContain(
      expectEnvelope(
        await c("POST", "/jobs", { operation: "merge", file_ids: [pdf4.id, "nope"] }),
        422,
        "validation_error",
      ).param,
    );
  }, 60_000);

  test("merge: every input must be a PDF of this account and mode", async () => {
    const c = await call();
    expect(
      expectEnvelope(
        await c("POST", "/jobs", { operation: "merge", file_ids: [pdf4.id, png.id] }),
        415,
        "unsupported_file_type",
      ).param,
    ).toBe("file_ids");
    expect(
      expectEnvelope(
        await c("POST", "/jobs", { operation: "merge", file_ids: [pdf4.id, randomUUID()] }),
        404,
        "not_found",
      ).param,
    ).toBe("file_ids");
    expect(
      expectEnvelope(
        await c("POST", "/jobs", { operation: "merge", file_ids: [pdf4.id, livePdf.id] }),
        403,
        "mode_mismatch",
      ).param,
    ).toBe("file_ids");
  }, 60_000);

  test("50 inputs is the most a merge takes", async () => {
    const c = await call();
    const r = await c("POST", "/jobs", { operation: "merge", file_ids: Array(50).fill(pdf1.id) });
    expect(r.status).toBe(202);
    expect(r.json.credits.pages_estimated).toBe(50);
    await c("POST", `/jobs/${r.json.id}/cancel`);
  }, 60_000);

  test("single-input operations: file_id required, file_ids refused, uuid format", async () => {
    const c = await call();
    expect(
      expectEnvelope(
        await c("POST", "/jobs", { operation: "rotate", options: { degrees: 90 } }),
        422,
        "validation_error",
      ).param,
    ).toBe("file_id");
    expect(
      expectEnvelope(
        await c("POST", "/jobs", { operation: "rotate", file_ids: [pdf4.id], options: { degrees: 90 } }),
        422,
        "validation_error",
      ).param,
    ).toBe("file_ids");
    expect(
      expectEnvelope(
        await c("POST", "/jobs", { operation: "rotate", file_id: "not-a-uuid", options: { degrees: 90 } }),
        422,
        "validation_error",
      ).param,
    ).toBe("file_id");
  }, 60_000);

  test("an unknown file, or another account's: 404 not_found on file_id", async () => {
    const c = await call();
    expect(
      expectEnvelope(
        await c("POST", "/jobs", { operation: "rotate", file_id: randomUUID(), options: { degrees: 90 } }),
        404,
        "not_found",
      ).param,
    ).toBe("file_id");
    const stranger = await svc.newKey();
    const e = expectEnvelope(
      await client(svc.baseUrl, stranger.key)("POST", "/jobs", {
        operation: "rotate",
        file_id: pdf4.id,
        options: { degrees: 90 },
      }),
      404,
      "not_found",
    );
    expect(e.param).toBe("file_id");
  }, 60_000);

  test("the other mode's file: 403 mode_mismatch on file_id", async () => {
    const c = await call();
    const e = expectEnvelope(
      await c("POST", "/jobs", { operation: "rotate", file_id: livePdf.id, options: { degrees: 90 } }),
      403,
      "mode_mismatch",
    );
    expect(e.param).toBe("file_id");
    expect(e.type).toBe("permission_error");
  }, 60_000);

  test("a presigned upload not completed yet: 409 file_not_ready (the state exists, though uploads are multipart-only here)", async () => {
    const c = await call();
    const id = randomUUID();
    await svc.sql`INSERT INTO files (id, account_id, mode, filename, content_type, kind, size_bytes, page_count, status, expires_at)
                  VALUES (${id}, ${accountId}, 'test', 'p.pdf', 'application/pdf', 'pdf', 10, 1, 'pending_upload', now() + interval '1 day')`;
    const e = expectEnvelope(
      await c("POST", "/jobs", { operation: "rotate", file_id: id, options: { degrees: 90 } }),
      409,
      "file_not_ready",
    );
    expect(e.param).toBe("file_id");
    expect(e.type).toBe("conflict_error");
    expect((await c("GET", `/files/${id}`)).json.status).toBe("pending_upload");
    expectEnvelope(await c("POST", `/files/${id}/complete`), 501, "presigned_unavailable");
    // Completing a multipart upload is a harmless no-op.
    const done = await c("POST", `/files/${pdf1.id}/complete`);
    expect(done.status).toBe(200);
    expect(done.json.status).toBe("ready");
  }, 60_000);

  test("a page operation on a non-PDF: 415 unsupported_file_type on file_id", async () => {
    const c = await call();
    expect(
      expectEnvelope(
        await c("POST", "/jobs", { operation: "rotate", file_id: png.id, options: { degrees: 90 } }),
        415,
        "unsupported_file_type",
      ).param,
    ).toBe("file_id");
  }, 60_000);

  test("the body must be a JSON object without unknown fields", async () => {
    const c = await call();
    expectEnvelope(await c("POST", "/jobs", "{not json"), 422, "validation_error");
    expectEnvelope(await c("POST", "/jobs", "[]"), 422, "validation_error");
    expectEnvelope(await c("POST", "/jobs", ""), 422, "validation_error");
    expectEnvelope(
      await c("POST", "/jobs", "operation=rotate", { "content-type": "application/x-www-form-urlencoded" }),
      422,
      "validation_error",
    );
    expect(
      expectEnvelope(
        await c("POST", "/jobs", { operation: "rotate", file_id: pdf4.id, options: { degrees: 90 }, priority: "high" }),
        422,
        "validation_error",
      ).param,
    ).toBe("priority");
  }, 60_000);
});

describe("the job object", () => {
  test("202 with the job queued: kind, progress, credits, metadata, sandbox flags", async () => {
    const c = await call();
    const r = await c("POST", "/jobs", {
      operation: "rotate",
      file_id: pdf4.id,
      options: { degrees: 180 },
      metadata: { order: "A-1" },
    });
    expect(r.status).toBe(202);
    expect(r.json).toMatchObject({
      object: "job",
      operation: "rotate",
      kind: "page_ops",
      status: "queued",
      file_id: pdf4.id,
      file_ids: null,
      options: { degrees: 180 },
      metadata: { order: "A-1" },
      result: null,
      error: null,
      sandbox: true,
      livemode: false,
      attempts: 0,
      credits: { billed: false, pages_estimated: 4 },
      progress: { pages_done: 0, pages_total: 4, percent: 0 },
      started_at: null,
      finished_at: null,
    });
    expect(Math.abs(Date.parse(r.json.created_at) - Date.now())).toBeLessThan(60_000);
  }, 60_000);

  test("each available operation reports its spec job kind", async () => {
    const kinds: [Record<string, unknown>, string][] = [
      [{ operation: "reorder", options: { order: [3, 2, 1, 0] } }, "page_ops"],
      [{ operation: "delete_pages", options: { pages: [1] } }, "page_ops"],
      [{ operation: "split", options: { mode: "chunks", chunk_size: 2 } }, "split"],
      [{ operation: "protect", options: { user_password: "p" } }, "protect"],
      [{ operation: "unlock" }, "unlock"],
      [{ operation: "merge", file_ids: [pdf4.id, pdf4.id] }, "merge"],
    ];
    for (const [body, kind] of kinds) {
      const c = await call();
      const r = await c("POST", "/jobs", body.operation === "merge" ? body : { file_id: pdf4.id, ...body });
      expect({ op: body.operation, status: r.status, kind: r.json?.kind }).toEqual({
        op: body.operation,
        status: 202,
        kind,
      });
    }
  }, 60_000);

  test("GET /jobs/{id}: 404 unknown or another account's, 403 other mode, 422 malformed id", async () => {
    const c = await call();
    const job = (await c("POST", "/jobs", { operation: "rotate", file_id: pdf4.id, options: { degrees: 90 } })).json;
    expect((await c("GET", `/jobs/${job.id}`)).json.id).toBe(job.id);
    expectEnvelope(await c("GET", `/jobs/${randomUUID()}`), 404, "not_found");
    expect(expectEnvelope(await c("GET", "/jobs/123"), 422, "validation_error").param).toBe("job_id");
    const stranger = await svc.newKey();
    expectEnvelope(await client(svc.baseUrl, stranger.key)("GET", `/jobs/${job.id}`), 404, "not_found");
    expectEnvelope(await client(svc.baseUrl, stranger.key)("POST", `/jobs/${job.id}/cancel`), 404, "not_found");
    expectEnvelope(await client(svc.baseUrl, stranger.key)("GET", `/jobs/${job.id}/result`), 404, "not_found");
    const live = await keyFor(svc, accountId, "live");
    expectEnvelope(await client(svc.baseUrl, live.key)("GET", `/jobs/${job.id}`), 403, "mode_mismatch");
    expectEnvelope(await client(svc.baseUrl, live.key)("POST", `/jobs/${job.id}/cancel`), 403, "mode_mismatch");
    expectEnvelope(await client(svc.baseUrl, live.key)("GET", `/jobs/${job.id}/result`), 403, "mode_mismatch");
  }, 60_000);

  test("scopes: POST /jobs and cancel need jobs:write; GET needs jobs:read", async () => {
    const reader = await keyFor(svc, accountId, "test", ["jobs:read"]);
    expect(
      expectEnvelope(
        await client(svc.baseUrl, reader.key)("POST", "/jobs", {
          operation: "rotate",
          file_id: pdf4.id,
          options: { degrees: 90 },
        }),
        403,
        "insufficient_scope",
      ).param,
    ).toBe("jobs:write");
    expect((await client(svc.baseUrl, reader.key)("GET", "/jobs")).status).toBe(200);
    const writer = await keyFor(svc, accountId, "test", ["jobs:write"]);
    expectEnvelope(await client(svc.baseUrl, writer.key)("GET", "/jobs"), 403, "insufficient_scope");
  }, 60_000);
});

describe("GET /jobs", () => {
  let k: string;
  let acct: string;
  const byStatus: Record<string, string[]> = {};
  let all: string[] = []; // newest first

  beforeAll(async () => {
    const owner = await svc.newKey();
    k = owner.key;
    acct = owner.accountId;
    // 26 jobs straight into the table in final or running states (the worker claims only
    // queued jobs, and a running row without a lease is never reaped), with distinct times.
    const plan = [
      ...Array(10).fill("succeeded"),
      ...Array(6).fill("failed"),
      ...Array(5).fill("cancelled"),
      ...Array(5).fill("running"),
    ];
    const now = Date.now();
    const rows = plan.map((status, i) => ({ id: randomUUID(), status, at: new Date(now - 120_000 + i * 1000) }));
    for (const r of rows) {
      await svc.sql`INSERT INTO jobs (id, account_id, key_id, mode, operation, kind, status, file_ids, options, pages_estimated, credits_per_page, created_at,
                                      error, pages_processed, result)
                    VALUES (${r.id}, ${acct}, ${owner.keyId}, 'test', 'rotate', 'page_ops', ${r.status}, ARRAY[${randomUUID()}]::uuid[], '{"degrees":90}', 3, 0, ${r.at},
                            ${r.status === "failed" ? svc.sql.json({ code: "file_unreadable", message: "x" }) : null},
                            ${r.status === "succeeded" ? 3 : null},
                            ${r.status === "succeeded" ? svc.sql.json({ type: "file", storage_key: "results/none", filename: "x.pdf", content_type: "application/pdf", bytes: 1 }) : null})`;
      (byStatus[r.status] ??= []).unshift(r.id);
    }
    all = rows.map((r) => r.id).reverse();
    // Noise: the same account's live job and another account's job.
    const live = await keyFor(svc, acct, "live");
    const other = await svc.newKey();
    for (const [a, kid, mode] of [
      [acct, live.keyId, "live"],
      [other.accountId, other.keyId, "test"],
    ] as const) {
      await svc.sql`INSERT INTO jobs (account_id, key_id, mode, operation, kind, status, file_ids, pages_estimated, credits_per_page)
                    VALUES (${a}, ${kid}, ${mode}, 'rotate', 'page_ops', 'cancelled', ARRAY[${randomUUID()}]::uuid[], 1, 0)`;
    }
  }, 60_000);

  test("default limit 20, newest first, has_more", async () => {
    const r = await client(svc.baseUrl, k)("GET", "/jobs");
    expect(r.status).toBe(200);
    expect(r.json.object).toBe("list");
    expect(r.json.data.map((j: any) => j.id)).toEqual(all.slice(0, 20));
    expect(r.json.has_more).toBe(true);
  }, 60_000);

  test("status filter, for each status", async () => {
    for (const status of ["succeeded", "failed", "cancelled", "running", "queued"]) {
      const r = await client(svc.baseUrl, k)("GET", `/jobs?status=${status}&limit=100`);
      expect(r.status).toBe(200);
      expect(r.json.data.map((j: any) => j.id)).toEqual(byStatus[status] ?? []);
      for (const j of r.json.data) expect(j.status).toBe(status);
    }
    const failed = (await client(svc.baseUrl, k)("GET", "/jobs?status=failed&limit=1")).json.data[0];
    expect(failed.error).toEqual({ code: "file_unreadable", message: "x" });
  }, 60_000);

  test("starting_after pages through everything once, with and without a status filter", async () => {
    const walk = async (query: string) => {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 20; i++) {
        const r = await client(svc.baseUrl, k)("GET", `/jobs?${query}${cursor ? `&starting_after=${cursor}` : ""}`);
        expect(r.status).toBe(200);
        seen.push(...r.json.data.map((j: any) => j.id));
        if (!r.json.has_more) break;
        cursor = r.json.data.at(-1).id;
      }
      return seen;
    };
    expect(await walk("limit=6")).toEqual(all);
    expect(await walk("limit=4&status=succeeded")).toEqual(byStatus.succeeded!);
  }, 60_000);

  test("limit 0, 101, 1.5 and an unknown status: 422 validation_error naming the parameter", async () => {
    for (const [q, param] of [
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=1.5", "limit"],
      ["status=done", "status"],
      ["status=", "status"],
      ["starting_after=x", "starting_after"],
    ]) {
      expect(expectEnvelope(await client(svc.baseUrl, k)("GET", `/jobs?${q}`), 422, "validation_error").param).toBe(
        param,
      );
    }
    const r = await client(svc.baseUrl, k)("GET", "/jobs?limit=100");
    expect(r.json.data.length).toBe(26);
    expect(r.json.has_more).toBe(false);
  }, 60_000);
});
