// The API spec (docs/api.md), Files (resource, endpoints, accepted types), Errors and Limits; issue 3, point 1:
// multipart upload -> 201 ready file with its page count and expires_at = upload + FILE_TTL_S;
// the type decided from the bytes must match the declared type (415); 413 above the maximum;
// malformed multipart -> 422; JSON form -> 501; GET /files pagination; GET / DELETE one file;
// another account's file -> 404, the other mode's -> 403.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { client, expectEnvelope, startService, type Service, hasCorpus } from "../support/service";
import {
  corpus,
  corpusFilesDir,
  keyFor,
  manifest,
  multipart,
  postFiles,
  run,
  tempDir,
  upload,
  uploadBytes,
  uploadOk,
  writeTemp,
} from "../support/jobs";
import { makePdf } from "../support/make-pdf";

let svc: Service;
let tmp: ReturnType<typeof tempDir>;

beforeAll(async () => {
  svc = await startService();
  tmp = tempDir();
}, 60_000);
afterAll(async () => {
  await svc?.stop();
  tmp?.cleanup();
}, 60_000);

/** A fresh sandbox key (each has its own 30 requests/minute bucket). */
async function key(mode: "test" | "live" = "test") {
  return svc.newKey({ mode });
}

describe("multipart upload", () => {
  test.skipIf(!hasCorpus)(
    "answers 201 with a ready file object; expires_at = created_at + FILE_TTL_S (24 h by default)",
    async () => {
      const { key: k } = await key();
      const r = await upload(svc, k, "latex-outline-4-pages.pdf");
      expect(r.status).toBe(201);
      const f = r.json;
      expect(f).toMatchObject({
        object: "file",
        status: "ready",
        page_count: 4,
        type: "pdf",
        encrypted: false,
        livemode: false,
        filename: "latex-outline-4-pages.pdf",
        content_type: "application/pdf",
      });
      expect(f.size_bytes).toBe(manifest().get("latex-outline-4-pages.pdf")!.bytes);
      expect(f.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(Date.parse(f.expires_at) - Date.parse(f.created_at)).toBe(86_400_000);
      expect(Math.abs(Date.parse(f.created_at) - Date.now())).toBeLessThan(60_000);
      expect(f.expires_at).toMatch(/Z$|[+-]\d\d:\d\d$/);
      // The stored bytes are the uploaded bytes.
      const [row] = await svc.sql`SELECT storage_key FROM files WHERE id = ${f.id}`;
      const stored = readFileSync(join(svc.dataDir, "blobs", row!.storage_key));
      expect(Buffer.compare(stored, readFileSync(corpus("latex-outline-4-pages.pdf")))).toBe(0);
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "page_count matches the corpus manifest for PDFs of 1 to 352 pages",
    async () => {
      const names = [
        "scanned-huckfinn-page.pdf",
        "rotated-page-attribute.pdf",
        "latex-multicolumn.pdf",
        "scanned-rotated-4-directions.pdf",
        "arabic-rotated-pages.pdf",
        "scanned-multipage-assembly.pdf",
        "damaged-append-page-content.pdf",
        "geotopo-117-pages.pdf",
        "freeculture-book-352-pages.pdf",
        "pdf20-incremental-update.pdf",
        "linearized-epson-printout.pdf",
      ];
      let k = (await key()).key;
      for (const [i, name] of names.entries()) {
        if (i % 10 === 9) k = (await key()).key;
        const f = await uploadOk(svc, k, name);
        expect({ name, pages: f.page_count, status: f.status }).toEqual({
          name,
          pages: manifest().get(name)!.pages,
          status: "ready",
        });
      }
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "encrypted PDFs are accepted (unlock needs them), with a page count when it can be read",
    async () => {
      const { key: k } = await key();
      for (const name of [
        "encrypted-libreoffice-rc4.pdf",
        "encrypted-aes256-unicode-password.pdf",
        "owner-password-aes-30-pages.pdf",
      ]) {
        const r = await upload(svc, k, name);
        expect({ name, status: r.status }).toEqual({ name, status: 201 });
        expect(r.json.encrypted).toBe(true);
        expect(r.json.type).toBe("pdf");
        expect([null, manifest().get(name)!.pages]).toContain(r.json.page_count);
      }
      // An owner-password-only PDF opens without a password: its pages are countable.
      const [row] =
        await svc.sql`SELECT page_count FROM files WHERE filename = 'owner-password-aes-30-pages.pdf' ORDER BY created_at DESC LIMIT 1`;
      expect(row!.page_count).toBe(30);
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "DOCX, XLSX, CSV, JPEG, PNG and WebP are accepted with the documented page rule",
    async () => {
      const { key: k } = await key();
      const docxPages = (name: string) => {
        const m = /<Pages>(\d+)<\/Pages>/.exec(run(["unzip", "-p", corpus(name), "docProps/app.xml"]).out);
        return m && Number(m[1]) > 0 ? Number(m[1]) : 1;
      };
      const xlsxSheets = (name: string) =>
        Math.max(1, (run(["unzip", "-p", corpus(name), "xl/workbook.xml"]).out.match(/<sheet\s/g) ?? []).length);
      const csvPages = (name: string) =>
        Math.max(
          1,
          Math.ceil(
            readFileSync(corpus(name), "utf8")
              .split(/\r\n|\n|\r/)
              .filter((l) => l.trim()).length / 50,
          ),
        );
      const cases: [string, string, number][] = [
        ["docx-tables.docx", "docx", docxPages("docx-tables.docx")],
        ["docx-section-props.docx", "docx", docxPages("docx-section-props.docx")],
        ["docx-empty.docx", "docx", docxPages("docx-empty.docx")],
        ["xlsx-dates-1904.xlsx", "xlsx", xlsxSheets("xlsx-dates-1904.xlsx")],
        ["xlsx-error-cells.xlsx", "xlsx", xlsxSheets("xlsx-error-cells.xlsx")],
        ["unsd-regions-chinese.csv", "csv", csvPages("unsd-regions-chinese.csv")],
        ["country-codes-utf8.csv", "csv", csvPages("country-codes-utf8.csv")],
        ["map-multilingual-color.jpg", "jpeg", 1],
        ["map-multilingual-cmyk.jpg", "jpeg", 1],
        ["typewriter-text.png", "png", 1],
        ["webp-lossless.webp", "webp", 1],
        ["webp-alpha.webp", "webp", 1],
      ];
      for (const [name, type, pages] of cases) {
        const r = await upload(svc, k, name);
        expect({
          name,
          status: r.status,
          type: r.json?.type,
          pages: r.json?.page_count,
          ready: r.json?.status,
        }).toEqual({ name, status: 201, type, pages, ready: "ready" });
      }
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "a generic part Content-Type defers to the filename extension; no declared type at all accepts an accepted kind",
    async () => {
      const { key: k } = await key();
      const bytes = readFileSync(corpus("scanned-huckfinn-page.pdf"));
      expect((await uploadBytes(svc, k, bytes, "scan.pdf", "application/octet-stream")).status).toBe(201);
      expect((await uploadBytes(svc, k, bytes, "scan", undefined)).status).toBe(201);
      const png = readFileSync(corpus("typewriter-text.png"));
      const r = await uploadBytes(svc, k, png, "noextension", "application/octet-stream");
      expect(r.status).toBe(201);
      expect(r.json.type).toBe("png");
    },
    60_000,
  );
});

describe("the whole corpus", () => {
  test.skipIf(!hasCorpus)(
    "every corpus file gets a clear answer (201, 415 or 422), never a 5xx, and the API stays up",
    async () => {
      const names = readdirSync(corpusFilesDir)
        .filter((n) => !n.endsWith(".tsv") && !n.endsWith(".md"))
        .sort();
      expect(names.length).toBeGreaterThan(70);
      const outcomes: Record<string, string> = {};
      let k = (await key()).key;
      for (const [i, name] of names.entries()) {
        if (i % 25 === 24) k = (await key()).key;
        const r = await upload(svc, k, name);
        outcomes[name] =
          r.status === 201 ? `201 ${r.json.type} ${r.json.page_count}` : `${r.status} ${r.json?.error?.code}`;
        expect({ name, status: r.status }).toEqual({
          name,
          status: [201, 415, 422].includes(r.status) ? r.status : -1,
        });
        const m = manifest().get(name);
        if (r.status === 201) {
          if (m?.type)
            expect({ name, type: r.json.type }).toEqual({ name, type: m.type === "tiff" ? "(refused)" : m.type });
          // Damaged files are counted by whatever repair finds; only intact ones must match.
          if (m?.pages && !r.json.encrypted && m.features.includes("qpdf-check=ok"))
            expect({ name, pages: r.json.page_count }).toEqual({ name, pages: m.pages });
        } else {
          expect({ name, code: r.json?.error?.code }).toEqual({
            name,
            code: r.status === 415 ? "unsupported_file_type" : "file_unreadable",
          });
        }
      }
      expect(outcomes["deslant-scan.tif"]).toBe("415 unsupported_file_type");
      expect(outcomes["malformed-header-only.pdf"]).toBe("422 file_unreadable");
      expect((await fetch(`${svc.origin}/healthz`)).status).toBe(200);
      console.log(JSON.stringify(Object.fromEntries(Object.entries(outcomes).filter(([, v]) => !v.startsWith("201")))));
    },
    120_000,
  );
});

describe("the type from the bytes must match the declared type (415 unsupported_file_type)", () => {
  async function refused(data: Uint8Array | string, filename: string, contentType?: string) {
    const { key: k } = await key();
    const e = expectEnvelope(await uploadBytes(svc, k, data, filename, contentType), 415, "unsupported_file_type");
    expect(e.type).toBe("invalid_request_error");
    expect(e.param).toBe("file");
    return e;
  }

  test.skipIf(!hasCorpus)(
    "a TIFF, declared honestly or as a PDF",
    async () => {
      const tif = readFileSync(corpus("deslant-scan.tif"));
      await refused(tif, "deslant-scan.tif", "image/tiff");
      await refused(tif, "deslant-scan.tif", "application/octet-stream");
      await refused(tif, "scan.pdf", "application/pdf");
      await refused(tif, "scan", undefined);
    },
    60_000,
  );

  test("random bytes", async () => {
    const junk = crypto.getRandomValues(new Uint8Array(8192));
    junk[0] = 0; // never valid text, so never a CSV
    await refused(junk, "data.bin", "application/octet-stream");
    await refused(junk, "data.pdf", "application/pdf");
    await refused(junk, "data", undefined);
  }, 60_000);

  test.skipIf(!hasCorpus)(
    "a PNG named .pdf, or declared application/pdf",
    async () => {
      const png = readFileSync(corpus("typewriter-text.png"));
      const e = await refused(png, "scan.pdf", "application/octet-stream");
      expect(e.message).toContain("png");
      await refused(png, "scan.pdf", undefined);
      await refused(png, "scan.png", "application/pdf");
      // And the other way round: a PDF declared as an image.
      await refused(readFileSync(corpus("scanned-huckfinn-page.pdf")), "scan.png", "image/png");
      await refused(readFileSync(corpus("map-multilingual-color.jpg")), "photo.png", "image/png");
    },
    60_000,
  );

  test("a ZIP that is not OOXML, named .docx, .xlsx or .zip", async () => {
    writeTemp(tmp.dir, "hello.txt", new TextEncoder().encode("hello, not a document\n"));
    expect(run(["zip", "-q", "plain.zip", "hello.txt"], tmp.dir).code).toBe(0);
    // A package with [Content_Types].xml but neither word/ nor xl/ is not OOXML for us either.
    writeTemp(
      tmp.dir,
      "[Content_Types].xml",
      new TextEncoder().encode(
        '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
      ),
    );
    expect(run(["zip", "-q", "fake-ooxml.zip", "[Content_Types].xml", "hello.txt"], tmp.dir).code).toBe(0);
    for (const zipName of ["plain.zip", "fake-ooxml.zip"]) {
      const zip = readFileSync(join(tmp.dir, zipName));
      await refused(zip, "report.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document");
      await refused(zip, "report.xlsx", "application/octet-stream");
      await refused(zip, "archive.zip", "application/zip");
    }
  }, 60_000);

  test.skipIf(!hasCorpus)(
    "a DOCX declared as XLSX, and a real type under an unaccepted Content-Type",
    async () => {
      await refused(
        readFileSync(corpus("docx-tables.docx")),
        "book.xlsx",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
      );
      await refused(readFileSync(corpus("scanned-huckfinn-page.pdf")), "doc.pdf", "application/msword");
    },
    60_000,
  );

  test("an empty file", async () => {
    await refused(new Uint8Array(0), "empty.pdf", "application/pdf");
  }, 60_000);

  test.skipIf(!hasCorpus)(
    "a PDF header with nothing usable behind it is refused without a crash (422 file_unreadable)",
    async () => {
      const { key: k } = await key();
      const r = await upload(svc, k, "malformed-header-only.pdf");
      const e = expectEnvelope(r, 422, "file_unreadable");
      expect(e.param).toBe("file");
      // The API is still healthy afterwards.
      expect((await fetch(`${svc.origin}/healthz`)).status).toBe(200);
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "nothing is stored for a refused upload (no row, no blob, no scratch file left)",
    async () => {
      const { key: k, accountId } = await key();
      await uploadBytes(svc, k, readFileSync(corpus("deslant-scan.tif")), "x.tif", "image/tiff");
      expect((await svc.sql`SELECT count(*)::int AS n FROM files WHERE account_id = ${accountId}`)[0]!.n).toBe(0);
      const scratch = join(svc.dataDir, "tmp");
      const left = existsSync(scratch)
        ? run(["ls", "-A", scratch])
            .out.split("\n")
            .filter((l) => l.startsWith("upload-"))
        : [];
      expect(left).toEqual([]);
    },
    60_000,
  );
});

describe("malformed multipart and other bodies (422 validation_error)", () => {
  const pdfBytes = () => (hasCorpus ? readFileSync(corpus("scanned-huckfinn-page.pdf")) : makePdf(1));

  test("multipart without a boundary", async () => {
    const { key: k } = await key();
    expectEnvelope(await postFiles(svc, k, "whatever", "multipart/form-data"), 422, "validation_error");
  }, 60_000);

  test("a body that is not multipart despite the header", async () => {
    const { key: k } = await key();
    expectEnvelope(
      await postFiles(svc, k, "just some text", "multipart/form-data; boundary=abc"),
      422,
      "validation_error",
    );
    expectEnvelope(await postFiles(svc, k, "", "multipart/form-data; boundary=abc"), 422, "validation_error");
  }, 60_000);

  test("a body cut off before the closing boundary", async () => {
    const { key: k } = await key();
    const mp = multipart(
      [{ name: "file", filename: "a.pdf", contentType: "application/pdf", data: pdfBytes() }],
      "cutoff",
    );
    const cut = mp.body.subarray(0, mp.body.length - "--cutoff--\r\n".length - 10);
    expectEnvelope(await postFiles(svc, k, cut, mp.contentType), 422, "validation_error");
  }, 60_000);

  test("no `file` part", async () => {
    const { key: k } = await key();
    const mp = multipart([{ name: "document", filename: "a.pdf", contentType: "application/pdf", data: pdfBytes() }]);
    const e = expectEnvelope(await postFiles(svc, k, mp.body, mp.contentType), 422, "validation_error");
    expect(e.param).toBe("document");
    const none = multipart([]);
    expectEnvelope(await postFiles(svc, k, none.body, none.contentType), 422, "validation_error");
  }, 60_000);

  test("extra parts besides `file`, before or after it", async () => {
    const { key: k, accountId } = await key();
    const after = multipart([
      { name: "file", filename: "a.pdf", contentType: "application/pdf", data: pdfBytes() },
      { name: "purpose", data: "ocr" },
    ]);
    const e = expectEnvelope(await postFiles(svc, k, after.body, after.contentType), 422, "validation_error");
    expect(e.param).toBe("purpose");
    const before = multipart([
      { name: "purpose", data: "ocr" },
      { name: "file", filename: "a.pdf", contentType: "application/pdf", data: pdfBytes() },
    ]);
    expectEnvelope(await postFiles(svc, k, before.body, before.contentType), 422, "validation_error");
    const two = multipart([
      { name: "file", filename: "a.pdf", contentType: "application/pdf", data: pdfBytes() },
      { name: "file", filename: "b.pdf", contentType: "application/pdf", data: pdfBytes() },
    ]);
    const e2 = expectEnvelope(await postFiles(svc, k, two.body, two.contentType), 422, "validation_error");
    expect(e2.param).toBe("file");
    expect((await svc.sql`SELECT count(*)::int AS n FROM files WHERE account_id = ${accountId}`)[0]!.n).toBe(0);
  }, 60_000);

  test("a body that is neither multipart nor JSON", async () => {
    const { key: k } = await key();
    expectEnvelope(await postFiles(svc, k, pdfBytes(), "application/pdf"), 422, "validation_error");
    expectEnvelope(await postFiles(svc, k, "x", "text/plain"), 422, "validation_error");
  }, 60_000);

  test("a browser-style FormData upload works (the common client path)", async () => {
    const { key: k } = await key();
    const form = new FormData();
    form.append("file", new Blob([pdfBytes()], { type: "application/pdf" }), "huck.pdf");
    const r = await client(svc.baseUrl, k)("POST", "/files", form);
    expect(r.status).toBe(201);
    expect(r.json.filename).toBe("huck.pdf");
  }, 60_000);
});

describe("the JSON form (presigned upload)", () => {
  test("answers 501 presigned_unavailable while no object store is configured", async () => {
    const { key: k } = await key();
    const e = expectEnvelope(
      await client(svc.baseUrl, k)("POST", "/files", {
        filename: "a.pdf",
        content_type: "application/pdf",
        size_bytes: 1234,
      }),
      501,
      "presigned_unavailable",
    );
    expect(e.type).toBe("invalid_request_error");
  }, 60_000);

  test("a malformed JSON request is still a 422 validation_error first", async () => {
    const { key: k } = await key();
    expectEnvelope(await client(svc.baseUrl, k)("POST", "/files", { filename: "a.pdf" }), 422, "validation_error");
    expectEnvelope(
      await client(svc.baseUrl, k)("POST", "/files", {
        filename: "a.pdf",
        content_type: "application/pdf",
        size_bytes: 0,
      }),
      422,
      "validation_error",
    );
    expectEnvelope(await client(svc.baseUrl, k)("POST", "/files", "{not json"), 422, "validation_error");
  }, 60_000);

  test("a JSON body over 1 MB is refused with the envelope, declared or streamed", async () => {
    const { key: k } = await key();
    const big = JSON.stringify({
      filename: "a".repeat(2 * 1024 * 1024),
      content_type: "application/pdf",
      size_bytes: 1,
    });
    expectEnvelope(await client(svc.baseUrl, k)("POST", "/files", big), 422, "validation_error");
    const bytes = new TextEncoder().encode(big);
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < bytes.length; i += 64 * 1024) c.enqueue(bytes.subarray(i, i + 64 * 1024));
        c.close();
      },
    });
    expectEnvelope(await postFiles(svc, k, stream, "application/json"), 422, "validation_error");
  }, 60_000);
});

describe("GET /files", () => {
  let k: string;
  let accountId: string;
  const ids: string[] = []; // newest first

  beforeAll(async () => {
    ({ key: k, accountId } = await key());
    // 25 files straight into the table (uploads would drain the token bucket): distinct
    // timestamps, and five sharing one timestamp so that the id breaks the tie.
    const now = Date.now();
    const rows: { id: string; at: Date }[] = [];
    for (let i = 0; i < 25; i++) rows.push({ id: randomUUID(), at: new Date(now - (i < 5 ? 0 : i) * 1000 - 60_000) });
    for (const r of rows) {
      await svc.sql`INSERT INTO files (id, account_id, mode, filename, content_type, kind, size_bytes, page_count, status, storage_key, created_at, expires_at)
                    VALUES (${r.id}, ${accountId}, 'test', 'f.pdf', 'application/pdf', 'pdf', 10, 1, 'ready', ${"files/00/" + r.id}, ${r.at}, now() + interval '1 day')`;
    }
    rows.sort((a, b) => b.at.getTime() - a.at.getTime() || (a.id < b.id ? 1 : -1));
    ids.push(...rows.map((r) => r.id));
    // Noise that must never show up: a deleted and an expired file, a live-mode file of the
    // same account, and another account's file.
    const other = await key();
    for (const [acct, mode, status] of [
      [accountId, "test", "deleted"],
      [accountId, "test", "expired"],
      [accountId, "live", "ready"],
      [other.accountId, "test", "ready"],
    ] as const) {
      await svc.sql`INSERT INTO files (account_id, mode, filename, content_type, kind, size_bytes, page_count, status, expires_at)
                    VALUES (${acct}, ${mode}, 'noise.pdf', 'application/pdf', 'pdf', 10, 1, ${status}, now() + interval '1 day')`;
    }
  }, 60_000);

  test("default limit 20, newest first, has_more", async () => {
    const r = await client(svc.baseUrl, k)("GET", "/files");
    expect(r.status).toBe(200);
    expect(r.json.object).toBe("list");
    expect(r.json.has_more).toBe(true);
    expect(r.json.data.map((f: any) => f.id)).toEqual(ids.slice(0, 20));
    expect(r.json.data[0]).toMatchObject({ object: "file", status: "ready", livemode: false });
  }, 60_000);

  test("starting_after walks every file exactly once", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const r = await client(svc.baseUrl, k)("GET", `/files?limit=7${cursor ? `&starting_after=${cursor}` : ""}`);
      expect(r.status).toBe(200);
      seen.push(...r.json.data.map((f: any) => f.id));
      if (!r.json.has_more) break;
      cursor = r.json.data.at(-1).id;
    }
    expect(seen).toEqual(ids);
  }, 60_000);

  test("limit 1 and 100 are the bounds", async () => {
    const one = await client(svc.baseUrl, k)("GET", "/files?limit=1");
    expect(one.json.data.length).toBe(1);
    expect(one.json.has_more).toBe(true);
    const all = await client(svc.baseUrl, k)("GET", "/files?limit=100");
    expect(all.json.data.length).toBe(25);
    expect(all.json.has_more).toBe(false);
  }, 60_000);

  test("limit 0, 101, 1.5, -1, abc, empty -> 422 validation_error on param limit", async () => {
    for (const v of ["0", "101", "1.5", "-1", "abc", ""]) {
      const e = expectEnvelope(await client(svc.baseUrl, k)("GET", `/files?limit=${v}`), 422, "validation_error");
      expect(e.param).toBe("limit");
    }
  }, 60_000);

  test("starting_after must be a uuid of one of the caller's files", async () => {
    expect(
      expectEnvelope(await client(svc.baseUrl, k)("GET", "/files?starting_after=nope"), 422, "validation_error").param,
    ).toBe("starting_after");
    expectEnvelope(await client(svc.baseUrl, k)("GET", `/files?starting_after=${randomUUID()}`), 404, "not_found");
    const [foreign] = await svc.sql`SELECT id FROM files WHERE account_id <> ${accountId} LIMIT 1`;
    expectEnvelope(await client(svc.baseUrl, k)("GET", `/files?starting_after=${foreign!.id}`), 404, "not_found");
    expectEnvelope(await client(svc.baseUrl, k)("GET", "/files?unknown=1"), 422, "validation_error");
  }, 60_000);

  test("the other mode's key sees none of these files", async () => {
    const live = await keyFor(svc, accountId, "live");
    const r = await client(svc.baseUrl, live.key)("GET", "/files?limit=100");
    expect(r.status).toBe(200);
    expect(r.json.data.map((f: any) => f.filename)).toEqual(["noise.pdf"]);
    expect(r.json.data[0].livemode).toBe(true);
  }, 60_000);
});

describe("GET and DELETE /files/{file_id}", () => {
  test.skipIf(!hasCorpus)(
    "get, delete, then 404 everywhere; the blob is removed",
    async () => {
      const { key: k } = await key();
      const f = await uploadOk(svc, k, "scanned-huckfinn-page.pdf");
      const call = client(svc.baseUrl, k);
      const got = await call("GET", `/files/${f.id}`);
      expect(got.status).toBe(200);
      expect(got.json).toEqual(f);
      const [row] = await svc.sql`SELECT storage_key FROM files WHERE id = ${f.id}`;
      const blob = join(svc.dataDir, "blobs", row!.storage_key);
      expect(existsSync(blob)).toBe(true);

      const del = await call("DELETE", `/files/${f.id}`);
      expect(del.status).toBe(200);
      expect(del.json).toEqual({ id: f.id, object: "file", deleted: true });
      expect(existsSync(blob)).toBe(false);
      expectEnvelope(await call("GET", `/files/${f.id}`), 404, "not_found");
      expectEnvelope(await call("DELETE", `/files/${f.id}`), 404, "not_found");
      expect((await call("GET", "/files")).json.data.map((x: any) => x.id)).not.toContain(f.id);
      // A job on a deleted file: 404 not_found naming file_id.
      const e = expectEnvelope(
        await call("POST", "/jobs", { operation: "rotate", file_id: f.id, options: { degrees: 90 } }),
        404,
        "not_found",
      );
      expect(e.param).toBe("file_id");
    },
    60_000,
  );

  test("an unknown id is 404 not_found; a malformed id is 422 validation_error on file_id", async () => {
    const { key: k } = await key();
    const call = client(svc.baseUrl, k);
    expectEnvelope(await call("GET", `/files/${randomUUID()}`), 404, "not_found");
    expectEnvelope(await call("DELETE", `/files/${randomUUID()}`), 404, "not_found");
    expect(expectEnvelope(await call("GET", "/files/not-a-uuid"), 422, "validation_error").param).toBe("file_id");
  }, 60_000);

  test.skipIf(!hasCorpus)(
    "another account's file is 404 not_found (indistinguishable from a missing one) and stays",
    async () => {
      const owner = await key();
      const f = await uploadOk(svc, owner.key, "scanned-huckfinn-page.pdf");
      const stranger = await key();
      const call = client(svc.baseUrl, stranger.key);
      expectEnvelope(await call("GET", `/files/${f.id}`), 404, "not_found");
      expectEnvelope(await call("DELETE", `/files/${f.id}`), 404, "not_found");
      expectEnvelope(
        await call("POST", "/jobs", { operation: "rotate", file_id: f.id, options: { degrees: 90 } }),
        404,
        "not_found",
      );
      expect((await client(svc.baseUrl, owner.key)("GET", `/files/${f.id}`)).status).toBe(200);
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "the other mode's file is 403 mode_mismatch, for GET, DELETE and jobs, in both directions",
    async () => {
      const sandbox = await key("test");
      const live = await keyFor(svc, sandbox.accountId, "live");
      const testFile = await uploadOk(svc, sandbox.key, "scanned-huckfinn-page.pdf");
      const liveFile = await uploadOk(svc, live.key, "scanned-huckfinn-page.pdf");
      expect(liveFile.livemode).toBe(true);
      for (const [k, f] of [
        [live.key, testFile],
        [sandbox.key, liveFile],
      ] as const) {
        const call = client(svc.baseUrl, k);
        expect(expectEnvelope(await call("GET", `/files/${f.id}`), 403, "mode_mismatch").type).toBe("permission_error");
        expectEnvelope(await call("DELETE", `/files/${f.id}`), 403, "mode_mismatch");
        expect(
          expectEnvelope(
            await call("POST", "/jobs", { operation: "rotate", file_id: f.id, options: { degrees: 90 } }),
            403,
            "mode_mismatch",
          ).param,
        ).toBe("file_id");
      }
      expect((await client(svc.baseUrl, sandbox.key)("GET", `/files/${testFile.id}`)).status).toBe(200);
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "scopes: uploading needs documents:write, reading needs documents:read",
    async () => {
      const reader = await svc.newKey({ scopes: ["documents:read"] });
      const e = expectEnvelope(await upload(svc, reader.key, "scanned-huckfinn-page.pdf"), 403, "insufficient_scope");
      expect(e.param).toBe("documents:write");
      expect((await client(svc.baseUrl, reader.key)("GET", "/files")).status).toBe(200);
      const writer = await svc.newKey({ scopes: ["documents:write"] });
      expectEnvelope(await client(svc.baseUrl, writer.key)("GET", "/files"), 403, "insufficient_scope");
    },
    60_000,
  );
});

describe("maximum upload size (413 file_too_large)", () => {
  let small: Service;
  const max = 100_000;
  beforeAll(async () => {
    small = await startService({ env: { MAX_UPLOAD_BYTES: String(max) } });
  }, 60_000);
  afterAll(async () => {
    await small?.stop();
  }, 60_000);

  test.skipIf(!hasCorpus)(
    "a file under MAX_UPLOAD_BYTES is accepted",
    async () => {
      const { key: k } = await small.newKey();
      expect(readFileSync(corpus("latex-form-fields.pdf")).length).toBeLessThan(max);
      expect((await upload(small, k, "latex-form-fields.pdf")).status).toBe(201);
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "a file just over the maximum (declared Content-Length within the slack) is refused while streaming",
    async () => {
      const { key: k, accountId } = await small.newKey();
      const size = readFileSync(corpus("scanned-ccitt-g4.pdf")).length;
      expect(size).toBeGreaterThan(max);
      const e = expectEnvelope(await upload(small, k, "scanned-ccitt-g4.pdf"), 413, "file_too_large");
      expect(e.type).toBe("invalid_request_error");
      expect(e.param).toBe("file");
      expect((await small.sql`SELECT count(*)::int AS n FROM files WHERE account_id = ${accountId}`)[0]!.n).toBe(0);
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "a declared Content-Length far over the maximum is refused up front",
    async () => {
      const { key: k } = await small.newKey();
      expectEnvelope(await upload(small, k, "scanned-huckfinn-page.pdf"), 413, "file_too_large");
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "a body far beyond the maximum (over the server's request body cap) still gets the 413 envelope",
    async () => {
      const { key: k } = await small.newKey();
      const r = await upload(small, k, "annotator-base64-image.pdf"); // 2.2 MB
      expectEnvelope(r, 413, "file_too_large");
    },
    60_000,
  );

  test("a chunked upload without Content-Length is counted as it streams", async () => {
    const { key: k } = await small.newKey();
    const boundary = "chunked-b";
    const head = new TextEncoder().encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.7\n`,
    );
    const filler = new Uint8Array(16 * 1024).fill(0x41);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent === 0) c.enqueue(head);
        if (sent > 400_000) {
          c.enqueue(new TextEncoder().encode(`\r\n--${boundary}--\r\n`));
          c.close();
          return;
        }
        c.enqueue(filler);
        sent += filler.length;
      },
    });
    let r;
    try {
      r = await postFiles(small, k, stream, `multipart/form-data; boundary=${boundary}`);
    } catch (e) {
      throw new Error(`the server dropped the connection instead of answering 413: ${e}`);
    }
    expectEnvelope(r, 413, "file_too_large");
  }, 60_000);
});
