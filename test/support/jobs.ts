// Helpers for the files / jobs / queue API tests: corpus access, hand-built multipart bodies
// (so a test controls every part header), uploads, job creation, waiting on job states in the
// database (polling over HTTP would drain the per-key token bucket), result downloads and the
// qpdf / poppler checks used on outputs.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { client, corpusDir, type Service } from "./service";
import { waitFor } from "./wait";
import { makePdf as makeBlankPdf } from "./make-pdf";

export const corpusFilesDir = join(corpusDir, "files");

export function corpus(name: string): string {
  return join(corpusFilesDir, name);
}

export interface ManifestRow {
  file: string;
  type: string;
  bytes: number;
  pages: number | null;
  features: string;
}

let manifestCache: Map<string, ManifestRow> | null = null;

/** The corpus MANIFEST.tsv (page counts, types, features) by file name. */
export function manifest(): Map<string, ManifestRow> {
  if (manifestCache) return manifestCache;
  const text = readFileSync(join(corpusDir, "MANIFEST.tsv"), "utf8");
  const [head, ...lines] = text.split("\n").filter((l) => l.trim());
  const cols = head!.split("\t");
  const m = new Map<string, ManifestRow>();
  for (const line of lines) {
    const cells = line.split("\t");
    const get = (c: string) => cells[cols.indexOf(c)] ?? "";
    m.set(get("file"), {
      file: get("file"),
      type: get("type"),
      bytes: Number(get("bytes")),
      pages: get("pages") ? Number(get("pages")) : null,
      features: get("features"),
    });
  }
  manifestCache = m;
  return m;
}

export interface Part {
  name: string;
  filename?: string;
  contentType?: string;
  data: Uint8Array | string;
}

/** A multipart/form-data body built by hand, with full control over each part's headers. */
export function multipart(
  parts: Part[],
  boundary = "----docproc" + Math.random().toString(36).slice(2),
): { body: Uint8Array; contentType: string } {
  const chunks: Uint8Array[] = [];
  const enc = new TextEncoder();
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    head += "\r\n";
    if (p.contentType !== undefined) head += `Content-Type: ${p.contentType}\r\n`;
    head += "\r\n";
    chunks.push(enc.encode(head));
    chunks.push(typeof p.data === "string" ? enc.encode(p.data) : p.data);
    chunks.push(enc.encode("\r\n"));
  }
  chunks.push(enc.encode(`--${boundary}--\r\n`));
  const size = chunks.reduce((n, c) => n + c.length, 0);
  const body = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    body.set(c, at);
    at += c.length;
  }
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

export interface Res {
  status: number;
  headers: Headers;
  json: any;
  text: string;
}

async function toRes(r: Response): Promise<Res> {
  const text = await r.text();
  let json: any = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {}
  return { status: r.status, headers: r.headers, json, text };
}

/** POST /files with a raw body and content type. */
export async function postFiles(
  svc: { baseUrl: string },
  key: string,
  body: RequestInit["body"],
  contentType: string,
  extraHeaders: Record<string, string> = {},
): Promise<Res> {
  const r = await fetch(`${svc.baseUrl}/files`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": contentType, ...extraHeaders },
    body,
  });
  return toRes(r);
}

/** Uploads bytes as the one `file` part. `contentType` undefined = no part Content-Type header. */
export async function uploadBytes(
  svc: { baseUrl: string },
  key: string,
  data: Uint8Array | string,
  filename: string,
  contentType?: string,
): Promise<Res> {
  const mp = multipart([{ name: "file", filename, contentType, data }]);
  return postFiles(svc, key, mp.body, mp.contentType);
}

const mimeByExt: Record<string, string> = {
  pdf: "application/pdf",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  csv: "text/csv",
  jpg: "image/jpeg",
  png: "image/png",
  webp: "image/webp",
  tif: "image/tiff",
};

/** Uploads a file from disk (a corpus name, or an absolute path) with its usual MIME type. */
export async function upload(
  svc: { baseUrl: string },
  key: string,
  nameOrPath: string,
  opts: { filename?: string; contentType?: string | null } = {},
): Promise<Res> {
  const path = nameOrPath.startsWith("/") ? nameOrPath : corpus(nameOrPath);
  const filename = opts.filename ?? path.split("/").pop()!;
  const ext = filename.split(".").pop()!.toLowerCase();
  const contentType =
    opts.contentType === null ? undefined : (opts.contentType ?? mimeByExt[ext] ?? "application/octet-stream");
  return uploadBytes(svc, key, new Uint8Array(readFileSync(path)), filename, contentType);
}

/** Uploads a hand-made PDF of `pages` blank pages and insists on 201 (runs without the corpus). */
export async function uploadMadePdfOk(
  svc: { baseUrl: string },
  key: string,
  pages: number,
  filename = `made-${pages}-pages.pdf`,
): Promise<any> {
  const r = await uploadBytes(svc, key, makeBlankPdf(pages), filename, "application/pdf");
  if (r.status !== 201) throw new Error(`upload of ${filename} answered ${r.status}: ${r.text}`);
  return r.json;
}

/** Uploads and insists on 201; returns the file object. */
export async function uploadOk(
  svc: { baseUrl: string },
  key: string,
  nameOrPath: string,
  opts: { filename?: string; contentType?: string | null } = {},
): Promise<any> {
  const r = await upload(svc, key, nameOrPath, opts);
  if (r.status !== 201) throw new Error(`upload of ${nameOrPath} answered ${r.status}: ${r.text}`);
  return r.json;
}

export function api(svc: { baseUrl: string }, key: string) {
  return client(svc.baseUrl, key);
}

/** POST /jobs; insists on 202 unless `expect` says otherwise. */
export async function createJob(
  svc: { baseUrl: string },
  key: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<any> {
  const r = await client(svc.baseUrl, key)("POST", "/jobs", body, headers);
  if (r.status !== 202) throw new Error(`POST /jobs answered ${r.status}: ${r.text}`);
  return r.json;
}

export const finalStatuses = ["succeeded", "failed", "cancelled"];

/** Waits (in the database, not over HTTP) until the job's status is one of `statuses`; returns the row. */
export async function waitJobRow(
  svc: Service,
  jobId: string,
  statuses: string[] = finalStatuses,
  timeoutMs = 30_000,
  where?: (row: any) => boolean,
): Promise<any> {
  return waitFor(
    `job ${jobId} to reach ${statuses.join("|")}`,
    async () => {
      const [row] = await svc.sql`SELECT * FROM jobs WHERE id = ${jobId}`;
      return row && statuses.includes(row.status) && (!where || where(row)) ? row : undefined;
    },
    timeoutMs,
    25,
  );
}

/** Waits for a final state, then answers GET /jobs/{id}. */
export async function finishedJob(svc: Service, key: string, jobId: string, timeoutMs = 30_000): Promise<any> {
  await waitJobRow(svc, jobId, finalStatuses, timeoutMs);
  const r = await client(svc.baseUrl, key)("GET", `/jobs/${jobId}`);
  if (r.status !== 200) throw new Error(`GET /jobs/${jobId} answered ${r.status}: ${r.text}`);
  return r.json;
}

/** GET /jobs/{id}/result as bytes. */
export async function download(
  svc: { baseUrl: string },
  key: string,
  jobId: string,
  query = "",
): Promise<{ status: number; headers: Headers; bytes: Uint8Array; json: any }> {
  const r = await fetch(`${svc.baseUrl}/jobs/${jobId}/result${query}`, { headers: { authorization: `Bearer ${key}` } });
  const bytes = new Uint8Array(await r.arrayBuffer());
  let json: any = null;
  if ((r.headers.get("content-type") || "").includes("json")) {
    try {
      json = JSON.parse(new TextDecoder().decode(bytes));
    } catch {}
  }
  return { status: r.status, headers: r.headers, bytes, json };
}

/** A temporary directory removed by the returned function. */
export function tempDir(prefix = "docproc-t-"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function writeTemp(dir: string, name: string, bytes: Uint8Array): string {
  const p = join(dir, name);
  writeFileSync(p, bytes);
  return p;
}

/** Runs a command; returns exit code and combined output. */
export function run(cmd: string[], cwd?: string): { code: number; out: string } {
  const p = Bun.spawnSync(cmd, { cwd, stdout: "pipe", stderr: "pipe" });
  return { code: p.exitCode ?? -1, out: p.stdout.toString() + p.stderr.toString() };
}

/** `qpdf --check`: exit 0 = clean, 3 = warnings only, 2 = errors. */
export function qpdfCheck(path: string, password?: string): { code: number; out: string } {
  return run(["qpdf", ...(password !== undefined ? [`--password=${password}`] : []), "--check", path]);
}

export function npages(path: string, password?: string): number {
  const r = run(["qpdf", ...(password !== undefined ? [`--password=${password}`] : []), "--show-npages", path]);
  if (r.code !== 0 && r.code !== 3) throw new Error(`qpdf --show-npages ${path} failed: ${r.out}`);
  return Number(r.out.trim().split("\n")[0]);
}

/** Per-page rotation (degrees) as pdfinfo reports it. */
export function rotations(path: string): number[] {
  const r = run(["pdfinfo", "-f", "1", "-l", "100000", path]);
  const out: number[] = [];
  for (const m of r.out.matchAll(/^Page\s+\d+\s+rot:\s+(\d+)/gm)) out.push(Number(m[1]));
  return out;
}

/** The text of one page (1-based), whitespace-normalised. */
export function pageText(path: string, page: number, password?: string): string {
  const r = run([
    "pdftotext",
    ...(password ? ["-upw", password] : []),
    "-f",
    String(page),
    "-l",
    String(page),
    "-layout",
    path,
    "-",
  ]);
  return r.out.replace(/\s+/g, " ").trim();
}

/** Account and key of a given mode on an existing account (for mode-partition tests). */
export async function keyFor(
  svc: Service,
  accountId: string,
  mode: "test" | "live",
  scopes?: string[],
): Promise<{ key: string; keyId: string }> {
  const { createKey } = await import("../../src/admin/commands");
  const k = await createKey(svc.sql as never, accountId, mode, scopes);
  return { key: k.key, keyId: k.id };
}

/** Event rows recorded for an object (job or file) id, oldest first. */
export async function eventsFor(svc: Service, objectId: string): Promise<any[]> {
  return svc.sql`SELECT id, type, mode, account_id, payload, created_at FROM events WHERE payload->'data'->'object'->>'id' = ${objectId} ORDER BY created_at, id`;
}

/** Direct child processes of the supervisor whose command line contains `role` (api.ts / worker.ts). */
export async function rolePids(svc: Service, role: "api" | "worker"): Promise<number[]> {
  const p = Bun.spawn(["pgrep", "-P", String(svc.proc.pid)], { stdout: "pipe", stderr: "ignore" });
  const text = await new Response(p.stdout).text();
  await p.exited;
  const out: number[] = [];
  for (const line of text.split("\n").filter(Boolean)) {
    const pid = Number(line.trim());
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmd.includes(`roles/${role}.ts`)) out.push(pid);
    } catch {}
  }
  return out;
}

/** The worker process pid encoded in a job's worker_id (`host:pid:rand`). */
export function workerPidOf(workerId: string): number {
  return Number(workerId.split(":")[1]);
}

/** Makes a PDF of the first `n` pages of a corpus PDF (or repeats inputs) with qpdf. */
export function makePdf(dir: string, name: string, sources: { file: string; range?: string }[]): string {
  const out = join(dir, name);
  const args = ["qpdf", "--empty", "--pages"];
  for (const s of sources) args.push(s.file.startsWith("/") ? s.file : corpus(s.file), ...(s.range ? [s.range] : []));
  args.push("--", out);
  const r = run(args);
  if (r.code !== 0 && r.code !== 3) throw new Error(`qpdf failed: ${r.out}`);
  return out;
}
