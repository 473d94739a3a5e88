// Strings are checked once, at the edge: a NUL (U+0000) or an unpaired surrogate anywhere in a
// JSON body, invalid UTF-8, or nesting deeper than 32 levels answers 422 validation_error with
// `param`; upload filenames are checked and cleaned (no NUL, shortened keeping the extension, a
// `file` part without a filename refused); oversized headers answer 431 with the envelope.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { connect } from "node:net";
import { client, expectEnvelope } from "../support/service";
import { useService } from "../support/use-service";
import { multipart, postFiles } from "../support/jobs";
import { minimalPdf } from "../support/pdf";

setDefaultTimeout(60_000);

const svc = useService();
let key: string;
let fileId: string;
const pdf = minimalPdf(2, "hostile");

beforeAll(async () => {
  key = (await svc.newKey()).key;
  const mp = multipart([{ name: "file", filename: "a.pdf", contentType: "application/pdf", data: pdf }]);
  const r = await postFiles(svc, key, mp.body, mp.contentType);
  expect(r.status).toBe(201);
  fileId = r.json.id;
});

/** Blobs on disk and file rows, to prove a refused upload left nothing. */
async function stored(): Promise<{ blobs: number; rows: number; scratch: number }> {
  const dir = join(svc.dataDir, "blobs", "files");
  const blobs = existsSync(dir) ? readdirSync(dir).reduce((n, d) => n + readdirSync(join(dir, d)).length, 0) : 0;
  const scratchDir = join(svc.dataDir, "tmp");
  const scratch = existsSync(scratchDir) ? readdirSync(scratchDir).length : 0;
  const [{ n }] = (await svc.sql`SELECT count(*)::int AS n FROM files`) as any;
  return { blobs, rows: n, scratch };
}

/** A raw JSON body, so the test controls escapes the client's JSON.stringify would normalise. */
function rawJson(method: string, path: string, body: string | Uint8Array) {
  return fetch(svc.baseUrl + path, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body,
  }).then(async (r) => {
    const text = await r.text();
    return { status: r.status, headers: r.headers, json: JSON.parse(text), text };
  });
}

describe("a string Postgres cannot store is refused with 422 validation_error and its param", () => {
  const cases: [string, string, string, string][] = [
    [
      "a NUL in a metadata value",
      "/jobs",
      `{"operation":"rotate","file_id":"FILE","options":{"degrees":90},"metadata":{"k":"a\\u0000b"}}`,
      "metadata.k",
    ],
    [
      "a NUL in a metadata key",
      "/jobs",
      `{"operation":"rotate","file_id":"FILE","options":{"degrees":90},"metadata":{"a\\u0000b":"v"}}`,
      "metadata.a\\u0000b",
    ],
    [
      "a NUL in options.user_password",
      "/jobs",
      `{"operation":"protect","file_id":"FILE","options":{"user_password":"pw\\u0000"}}`,
      "options.user_password",
    ],
    [
      "a NUL in options.password",
      "/jobs",
      `{"operation":"unlock","file_id":"FILE","options":{"password":"\\u0000"}}`,
      "options.password",
    ],
    [
      "an unpaired surrogate in a metadata value",
      "/jobs",
      `{"operation":"rotate","file_id":"FILE","options":{"degrees":90},"metadata":{"k":"\\ud800"}}`,
      "metadata.k",
    ],
    [
      "a NUL in a webhook description",
      "/webhooks",
      `{"url":"https://example.com/h","description":"x\\u0000"}`,
      "description",
    ],
    ["a NUL in a webhook URL", "/webhooks", `{"url":"https://example.com/\\u0000"}`, "url"],
  ];
  for (const [what, path, body, param] of cases) {
    test(what, async () => {
      const r = await rawJson("POST", path, body.replace("FILE", fileId));
      expect(expectEnvelope(r, 422, "validation_error").param).toBe(param);
    });
  }

  test("a NUL in a PATCH of a webhook description", async () => {
    const c = client(svc.baseUrl, key);
    const wh = await c("POST", "/webhooks", { url: "https://example.com/hook" });
    expect(wh.status).toBe(201);
    const r = await rawJson("PATCH", `/webhooks/${wh.json.id}`, `{"description":"\\u0000"}`);
    expect(expectEnvelope(r, 422, "validation_error").param).toBe("description");
  });

  test("a body that is not valid UTF-8", async () => {
    const bytes = new Uint8Array([
      ...new TextEncoder().encode('{"url":"https://example.com/'),
      0xff,
      0xfe,
      ...new TextEncoder().encode('"}'),
    ]);
    expectEnvelope(await rawJson("POST", "/webhooks", bytes), 422, "validation_error");
  });

  test("JSON nested deeper than 32 levels, and 100,000 levels", async () => {
    const nest = (n: number) =>
      `{"operation":"rotate","file_id":"${fileId}","options":{"degrees":90},"metadata":{"k":` +
      "[".repeat(n) +
      "]".repeat(n) +
      "}}";
    expectEnvelope(await rawJson("POST", "/jobs", nest(40)), 422, "validation_error");
    expectEnvelope(await rawJson("POST", "/jobs", nest(100_000)), 422, "validation_error");
  });

  test("no job or webhook was created by any refused request", async () => {
    const [{ n }] = (await svc.sql`SELECT count(*)::int AS n FROM jobs`) as any;
    expect(n).toBe(0);
  });
});

describe("upload filenames are checked and cleaned at the edge", () => {
  async function uploadNamed(disposition: string) {
    const boundary = "b0undary";
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"${disposition}\r\nContent-Type: application/pdf\r\n\r\n`;
    const body = Buffer.concat([Buffer.from(head, "utf8"), pdf, Buffer.from(`\r\n--${boundary}--\r\n`)]);
    return postFiles(svc, key, body, `multipart/form-data; boundary=${boundary}`);
  }

  test("a NUL in the filename, raw or percent-encoded, and bad percent-encoding: 422 on `file`, nothing stored", async () => {
    const before = await stored();
    for (const d of [
      `; filename="a\u0000b.pdf"`,
      `; filename*=UTF-8''a%00b.pdf`,
      `; filename*=UTF-8''a%ZZ.pdf`,
      `; filename*=UTF-8''%C3.pdf`,
    ]) {
      const r = await uploadNamed(d);
      expect(expectEnvelope(r, 422, "validation_error").param).toBe("file");
    }
    expect(await stored()).toEqual(before);
  });

  test("a filename that is not valid UTF-8: 422", async () => {
    const boundary = "b0undary";
    const head = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a`),
      Buffer.from([0xc3, 0x28]),
      Buffer.from(`.pdf"\r\nContent-Type: application/pdf\r\n\r\n`),
    ]);
    const body = Buffer.concat([head, pdf, Buffer.from(`\r\n--${boundary}--\r\n`)]);
    expect(
      expectEnvelope(
        await postFiles(svc, key, body, `multipart/form-data; boundary=${boundary}`),
        422,
        "validation_error",
      ).param,
    ).toBe("file");
  });

  test("a `file` part without a filename, or with an empty one: 422 on `file`, nothing stored", async () => {
    const before = await stored();
    expect(expectEnvelope(await uploadNamed(""), 422, "validation_error").param).toBe("file");
    expect(expectEnvelope(await uploadNamed(`; filename=""`), 422, "validation_error").param).toBe("file");
    expect(expectEnvelope(await uploadNamed(`; filename="\u0001\u0002"`), 422, "validation_error").param).toBe("file");
    expect(await stored()).toEqual(before);
  });

  test("a 10,000-character filename is shortened to 255 characters keeping its extension", async () => {
    const r = await uploadNamed(`; filename="${"n".repeat(10_000)}.pdf"`);
    expect(r.status).toBe(201);
    expect(r.json.filename).toHaveLength(255);
    expect(r.json.filename.endsWith("n.pdf")).toBe(true);
    // Astral characters are counted as one and never cut in half.
    const r2 = await uploadNamed(`; filename="${"😀".repeat(300)}.pdf"`);
    expect(r2.status).toBe(201);
    expect([...r2.json.filename]).toHaveLength(255);
    expect(r2.json.filename.isWellFormed()).toBe(true);
  });

  test("paths, control characters and quotes are removed from the stored name", async () => {
    const r = await uploadNamed(`; filename="C:\\\\Users\\\\x\\\\re\tport\u202e.pdf"`);
    expect(r.status).toBe(201);
    expect(r.json.filename).toBe("report.pdf");
    // Escaped quotes inside the quoted-string neither cut the name nor survive in it.
    const r3 = await uploadNamed(`; filename="\\"a;b=c\\".pdf"`);
    expect(r3.status).toBe(201);
    expect(r3.json.filename).toBe("a;b=c.pdf");
    const r2 = await uploadNamed(`; filename*=UTF-8''..%2F..%2Fetc%2Fpasswd.pdf`);
    expect(r2.status).toBe(201);
    expect(r2.json.filename).toBe("passwd.pdf");
  });
});

describe("oversized request headers", () => {
  test("headers over 32 KiB answer 431 headers_too_large with the envelope and X-Request-Id", async () => {
    for (const size of [40_000, 200_000]) {
      const r = await client(svc.baseUrl, key)("GET", "/account", undefined, { "x-padding": "a".repeat(size) });
      const e = expectEnvelope(r, 431, "headers_too_large");
      expect(e.request_id).toMatch(/^req_/);
    }
    // Many smaller headers count too.
    const many: Record<string, string> = {};
    for (let i = 0; i < 150; i++) many[`x-h${i}`] = "v".repeat(300);
    expectEnvelope(await client(svc.baseUrl, key)("GET", "/account", undefined, many), 431, "headers_too_large");
  });

  test("over 200 header lines (Bun's fixed limit) is a bare 431, never a 5xx", async () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 250; i++) many[`x-h${i}`] = "v";
    const r = await fetch(`${svc.baseUrl}/account`, { headers: { ...many, authorization: `Bearer ${key}` } });
    expect(r.status).toBe(431);
  });

  test("a head over Bun's own 1 MiB parser limit is refused without a 5xx and the server keeps serving", async () => {
    const port = Number(new URL(svc.origin).port);
    const status = await new Promise<string>((resolve) => {
      const sock = connect(port, "127.0.0.1", () => {
        sock.write(`GET /api/v1/account HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(1_200_000)}\r\n\r\n`);
      });
      let got = "";
      sock.on("data", (d) => (got += d.toString()));
      sock.on("close", () => resolve(got.split("\r\n")[0] ?? ""));
      sock.on("error", () => resolve(got.split("\r\n")[0] ?? "reset"));
      setTimeout(() => sock.destroy(), 10_000);
    });
    expect(status).not.toMatch(/HTTP\/1\.1 5\d\d/);
    expect((await client(svc.baseUrl, key)("GET", "/account")).status).toBe(200);
  });
});
