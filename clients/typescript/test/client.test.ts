// The TypeScript client against the real service (issue 17): generated types match the served
// document; upload and rotate, compress, convert to jpg and OCR blocks; a create whose response
// is lost is retried with the same key and makes one job; a 429 is waited out; a webhook delivery
// verifies and a tampered one is refused; errors arrive as typed ApiError.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { startService, type Service } from "../../../test/support/service";
import { rotations, tempDir, writeTemp } from "../../../test/support/jobs";
import { startReceiver } from "../../../test/support/webhook-receiver";
import { generate, documentPath, typesPath } from "../scripts/generate";
import {
  ApiError,
  Client,
  ConnectionError,
  JobFailedError,
  WebhookVerificationError,
  type FetchLike,
  type OcrResult,
} from "../src/index";
import { textPdf } from "./pdf";

let svc: Service;
let tmp: ReturnType<typeof tempDir>;
let pdfPath: string;

beforeAll(async () => {
  svc = await startService({ workers: 1, env: { SANDBOX_OCR: "real" } });
  tmp = tempDir();
  pdfPath = writeTemp(tmp.dir, "invoice.pdf", textPdf([["INVOICE 4821", "TOTAL PAID"]]));
}, 60_000);
afterAll(async () => {
  await svc?.stop();
  tmp?.cleanup();
}, 60_000);

/** A client on a fresh sandbox key (each key has its own 30 requests/minute bucket). */
async function newClient(fetchImpl?: FetchLike) {
  const { key } = await svc.newKey({ mode: "test" });
  return { key, client: new Client({ apiKey: key, baseUrl: svc.baseUrl, fetch: fetchImpl }) };
}

test("committed openapi.json and src/schema.ts equal what the generator makes from the served document", async () => {
  const { document, types } = await generate();
  expect(readFileSync(documentPath, "utf8")).toBe(document);
  expect(readFileSync(typesPath, "utf8")).toBe(types);
  // The in-process document is the one the running service serves (only `servers` differs).
  const served = (await (await fetch(`${svc.baseUrl}/openapi.json`)).json()) as Record<string, unknown>;
  expect({ ...served, servers: null }).toEqual({ ...JSON.parse(document), servers: null });
});

describe("operations through the client", () => {
  test("upload from a path, then jobs.run rotate gives a PDF whose page is turned 90 degrees", async () => {
    const { client } = await newClient();
    const file = await client.files.upload(pdfPath);
    expect(file).toMatchObject({ object: "file", type: "pdf", page_count: 1, filename: "invoice.pdf" });
    const progress: string[] = [];
    const { job, result } = await client.jobs.run(
      { operation: "rotate", file_id: file.id, options: { degrees: 90 } },
      { onProgress: (j) => progress.push(j.status) },
    );
    expect(job.status).toBe("succeeded");
    expect(progress.at(-1)).toBe("succeeded");
    expect(result).toBeInstanceOf(Uint8Array);
    expect(rotations(writeTemp(tmp.dir, "rotated.pdf", result as Uint8Array))).toEqual([90]);
  }, 60_000);

  test("compress from a Blob gives a PDF no larger than the input", async () => {
    const { client } = await newClient();
    const input = readFileSync(pdfPath);
    const file = await client.files.upload(new File([input], "in.pdf", { type: "application/pdf" }));
    const job = await client.jobs.create({ operation: "compress", file_id: file.id, options: { level: "strong" } });
    const done = await client.jobs.wait(job.id, { timeout: 60_000 });
    expect(done.status).toBe("succeeded");
    const bytes = await client.jobs.result(done.id);
    expect(new TextDecoder().decode(bytes.subarray(0, 5))).toBe("%PDF-");
    expect(bytes.length).toBeLessThanOrEqual(input.length);
  }, 60_000);

  test("convert to jpg gives a JPEG, and OCR blocks of that JPEG read the page's words back", async () => {
    const { client } = await newClient();
    const file = await client.files.upload(pdfPath);
    const jpg = await client.jobs.run({ operation: "convert", file_id: file.id, options: { target: "jpg", dpi: 150 } });
    const bytes = jpg.result as Uint8Array;
    expect([...bytes.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
    const image = await client.files.upload(new File([bytes], "page.jpg", { type: "image/jpeg" }));
    expect(image.type).toBe("jpeg");
    const ocr = await client.jobs.run(
      { operation: "ocr", file_id: image.id, options: { output: "blocks" } },
      { timeout: 120_000 },
    );
    expect(ocr.job.result?.type).toBe("json");
    const blocks = ocr.result as OcrResult;
    expect(blocks.pages).toHaveLength(1);
    expect(blocks.pages[0]!.ocr).toBe(true);
    const text = blocks.pages[0]!.text.toUpperCase();
    for (const word of ["INVOICE", "4821", "TOTAL", "PAID"]) expect(text).toContain(word);
    expect(await client.jobs.result(ocr.job.id, { format: "json" })).toEqual(blocks);
  }, 150_000);

  test("jobs.cancel answers the job; a failed job makes jobs.run throw JobFailedError with its code", async () => {
    const { client } = await newClient();
    const file = await client.files.upload(pdfPath);
    const job = await client.jobs.create({ operation: "compress", file_id: file.id });
    const cancelled = await client.jobs.cancel(job.id);
    expect(cancelled).toMatchObject({ id: job.id, object: "job" });
    expect(["cancelled", "succeeded"]).toContain((await client.jobs.wait(job.id)).status);
    // A wrong unlock password fails the job with invalid_options (README, Operations).
    const locked = await client.jobs.run({
      operation: "protect",
      file_id: file.id,
      options: { user_password: "right" },
    });
    const lockedFile = await client.files.upload(new File([locked.result as Uint8Array], "locked.pdf"));
    const err = await client.jobs
      .run({ operation: "unlock", file_id: lockedFile.id, options: { password: "wrong" } })
      .catch((e) => e);
    expect(err).toBeInstanceOf(JobFailedError);
    expect(err).toMatchObject({ code: "invalid_options", job: { status: "failed" } });
  }, 60_000);
});

describe("errors", () => {
  test("a 422 arrives as ApiError with type, code, param, requestId and status", async () => {
    const { client } = await newClient();
    const file = await client.files.upload(pdfPath);
    const err = (await client.jobs
      .create({ operation: "rotate", file_id: file.id, options: { degrees: 45 } })
      .catch((e) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({
      status: 422,
      type: "invalid_request_error",
      code: "invalid_options",
      param: "options.degrees",
    });
    expect(err.requestId).toMatch(/^req_/);
  });

  test("an unknown key is ApiError 401 invalid_api_key", async () => {
    const client = new Client({ apiKey: "svk_test_nope", baseUrl: svc.baseUrl });
    expect(await client.jobs.get(crypto.randomUUID()).catch((e) => e)).toMatchObject({
      status: 401,
      type: "authentication_error",
      code: "invalid_api_key",
    });
  });

  test("without an object store, uploadPresigned and resultUrl are ApiError 501 presigned_unavailable", async () => {
    const { client } = await newClient();
    const up = (await client.files.uploadPresigned(pdfPath).catch((e) => e)) as ApiError;
    expect(up).toBeInstanceOf(ApiError);
    expect(up).toMatchObject({ status: 501, code: "presigned_unavailable" });
    const file = await client.files.upload(pdfPath);
    const job = await client.jobs.wait(
      (await client.jobs.create({ operation: "rotate", file_id: file.id, options: { degrees: 90 } })).id,
    );
    expect(job.status).toBe("succeeded");
    const url = (await client.jobs.resultUrl(job.id).catch((e) => e)) as ApiError;
    expect(url).toBeInstanceOf(ApiError);
    expect(url).toMatchObject({ status: 501, code: "presigned_unavailable" });
  }, 60_000);

  test("an unreachable service is a ConnectionError after the retries", async () => {
    const client = new Client({
      apiKey: "svk_test_x",
      baseUrl: "http://127.0.0.1:1/api/v1",
      retry: { initialDelayMs: 10 },
    });
    expect(await client.jobs.get(crypto.randomUUID()).catch((e) => e)).toBeInstanceOf(ConnectionError);
  });
});

describe("retries", () => {
  test("a create whose response is lost is retried with the same generated key and makes one job", async () => {
    const sent: { key: string | null; method: string; path: string }[] = [];
    let dropped = 0;
    // The request reaches the service and the job is created, then the connection "drops".
    const lossy: FetchLike = async (req) => {
      sent.push({ key: req.headers.get("idempotency-key"), method: req.method, path: new URL(req.url).pathname });
      const res = await fetch(req);
      if (req.method === "POST" && req.url.endsWith("/jobs") && dropped++ === 0) {
        await res.arrayBuffer();
        throw new TypeError("fetch failed: connection reset (simulated after the request was processed)");
      }
      return res;
    };
    const { client } = await newClient(lossy);
    const file = await client.files.upload(pdfPath);
    const job = await client.jobs.create({ operation: "rotate", file_id: file.id, options: { degrees: 180 } });
    const posts = sent.filter((s) => s.method === "POST" && s.path.endsWith("/jobs"));
    expect(posts).toHaveLength(2);
    expect(posts[0]!.key).toMatch(/^docproc-ts-[0-9a-f-]{36}$/);
    expect(posts[1]!.key).toBe(posts[0]!.key);
    const list = await client.api.GET("/jobs", {});
    expect(list.data!.data.map((j) => j.id)).toEqual([job.id]);
  });

  test("a 429 is waited out (Retry-After) and the call succeeds", async () => {
    const { key, client } = await newClient();
    // Drain the key's bucket (30/min for sandbox keys) directly.
    let limited: Response | undefined;
    for (let i = 0; i < 60 && !limited; i++) {
      const r = await fetch(`${svc.baseUrl}/account`, { headers: { authorization: `Bearer ${key}` } });
      await r.arrayBuffer();
      if (r.status === 429) limited = r;
    }
    expect(limited?.headers.get("retry-after")).toMatch(/^\d+$/);
    const t0 = performance.now();
    const account = await client.api.GET("/account", {});
    expect(account.response.status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(900);
  }, 30_000);
});

describe("webhooks", () => {
  test("a job.succeeded delivery to a local receiver verifies; a tampered signature or body is refused", async () => {
    const receiver = startReceiver();
    try {
      const { client } = await newClient();
      const created = await client.api.POST("/webhooks", {
        body: { url: receiver.url("/hook"), events: ["job.succeeded"] },
      });
      expect(created.response.status).toBe(201);
      const secret = created.data!.secret!;
      const file = await client.files.upload(pdfPath);
      const { job } = await client.jobs.run({ operation: "rotate", file_id: file.id, options: { degrees: 270 } });
      await receiver.waitFor((h) => h.some((x) => x.path === "/hook"), 30_000, "the job.succeeded delivery");
      const hit = receiver.at("/hook")[0]!;
      const header = hit.headers["service-signature"]!;
      const event = client.webhooks.verify(hit.raw, header, secret);
      expect(event).toMatchObject({
        object: "event",
        type: "job.succeeded",
        livemode: false,
        data: { object: { id: job.id } },
      });
      // Bytes work as well as text.
      expect(client.webhooks.verify(new TextEncoder().encode(hit.raw), header, secret).id).toBe(event.id);

      const v1 = /v1=([0-9a-f]+)/.exec(header)![1]!;
      const flipped = header.replace(v1, (v1[0] === "0" ? "1" : "0") + v1.slice(1));
      expect(() => client.webhooks.verify(hit.raw, flipped, secret)).toThrow(WebhookVerificationError);
      expect(() => client.webhooks.verify(hit.raw.replace(job.id, crypto.randomUUID()), header, secret)).toThrow(
        WebhookVerificationError,
      );
      expect(() => client.webhooks.verify(hit.raw, header, secret + "x")).toThrow(WebhookVerificationError);
      expect(() => client.webhooks.verify(hit.raw, "t=1,v1=", secret)).toThrow(WebhookVerificationError);
      // Outside the 300 s tolerance.
      const t = Number(/t=(\d+)/.exec(header)![1]);
      expect(() => client.webhooks.verify(hit.raw, header, secret, { now: t + 301 })).toThrow(/tolerance/);
      expect(client.webhooks.verify(hit.raw, header, secret, { now: t + 299 }).id).toBe(event.id);
    } finally {
      receiver.stop();
    }
  }, 60_000);
});
