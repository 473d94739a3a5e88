// Starts the real service (supervisor, API and workers as separate processes) against a fresh
// Postgres database for one test file, and offers helpers to create accounts and keys.
import postgres from "postgres";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createServer } from "node:net";
import type { Subprocess } from "bun";

export const root = resolve(import.meta.dir, "../..");
/** The corpus and whether it is present (test/support/corpus.ts); tests without it skip. */
export { corpusDir, hasCorpus } from "./corpus";

/** The Postgres server tests create their databases on (CI: the machine's local Postgres). */
export const adminDatabaseUrl = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => res(p));
    });
  });
}

export async function createDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `docproc_t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = postgres(adminDatabaseUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(adminDatabaseUrl);
  u.pathname = "/" + name;
  return {
    url: u.toString(),
    drop: async () => {
      const a = postgres(adminDatabaseUrl, { max: 1, onnotice: () => {} });
      await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.end();
    },
  };
}

export interface Service {
  baseUrl: string;
  origin: string;
  databaseUrl: string;
  dataDir: string;
  sql: postgres.Sql;
  proc: Subprocess;
  logs: () => string;
  /** Runs the real admin CLI and parses its JSON output. */
  admin(...args: string[]): Promise<any>;
  /** An account with a key of the given mode; defaults: starter plan, verified, all scopes. */
  newKey(opts?: {
    mode?: "test" | "live";
    plan?: "starter" | "free";
    verified?: boolean;
    scopes?: string[];
    expiresIn?: number;
  }): Promise<{ key: string; keyId: string; accountId: string }>;
  stop(): Promise<void>;
}

export async function startService(
  opts: { env?: Record<string, string>; workers?: number; args?: string[] } = {},
): Promise<Service> {
  const db = await createDatabase();
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), "docproc-test-"));
  let output = "";
  const env = {
    ...process.env,
    DATABASE_URL: db.url,
    PORT: String(port),
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    WORKERS: String(opts.workers ?? 1),
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
    LOG_LEVEL: process.env.TEST_LOG_LEVEL || "warn",
    ...opts.env,
  };
  const proc = Bun.spawn(["bun", join(root, "src/main.ts"), ...(opts.args ?? [])], {
    cwd: root,
    env,
    stdout: "pipe",
    stderr: "pipe",
  });
  const drain = async (s: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    for await (const chunk of s) output += dec.decode(chunk);
  };
  void drain(proc.stdout as ReadableStream<Uint8Array>);
  void drain(proc.stderr as ReadableStream<Uint8Array>);
  const origin = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const r = await fetch(`${origin}/healthz`);
      if (r.status === 200) break;
    } catch {}
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`service did not start:\n${output}`);
    await Bun.sleep(50);
  }
  const sql = postgres(db.url, { max: 4, onnotice: () => {} });
  const admin = async (...args: string[]) => {
    const p = Bun.spawn(["bun", join(root, "src/admin/cli.ts"), ...args], {
      cwd: root,
      env,
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err, code] = await Promise.all([
      new Response(p.stdout).text(),
      new Response(p.stderr).text(),
      p.exited,
    ]);
    if (code !== 0) throw new Error(`admin ${args.join(" ")} failed (${code}): ${err}`);
    return JSON.parse(out);
  };
  const { createAccount, createKey } = await import("../../src/admin/commands");
  let n = 0;
  const service: Service = {
    baseUrl: `${origin}/api/v1`,
    origin,
    databaseUrl: db.url,
    dataDir,
    sql,
    proc,
    logs: () => output,
    admin,
    async newKey(o = {}) {
      const account = await createAccount(
        sql as never,
        `user${++n}-${Math.random().toString(36).slice(2, 8)}@example.com`,
        o.plan ?? "starter",
        o.verified ?? true,
      );
      const k = await createKey(sql as never, account.id, o.mode ?? "test", o.scopes, o.expiresIn);
      return { key: k.key, keyId: k.id, accountId: account.id };
    },
    async stop() {
      proc.kill("SIGTERM");
      const t = setTimeout(() => proc.kill("SIGKILL"), 15_000);
      await proc.exited;
      clearTimeout(t);
      await sql.end({ timeout: 2 });
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return service;
}

/** fetch with a Bearer key and JSON helpers. */
export function client(baseUrl: string, key?: string) {
  return async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const h: Record<string, string> = { ...headers };
    if (key) h.authorization = `Bearer ${key}`;
    let payload: string | FormData | undefined;
    if (body instanceof FormData) payload = body;
    else if (body !== undefined) {
      payload = typeof body === "string" ? body : JSON.stringify(body);
      h["content-type"] ??= "application/json";
    }
    const res = await fetch(baseUrl + path, { method, headers: h, body: payload });
    const text = await res.text();
    let json: any = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {}
    return { status: res.status, headers: res.headers, json, text };
  };
}

/** Asserts the spec's error envelope and returns its `error`. */
export function expectEnvelope(res: { status: number; headers: Headers; json: any }, status: number, code: string) {
  if (res.status !== status || res.json?.error?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${res.status} ${JSON.stringify(res.json)}`);
  }
  const e = res.json.error;
  for (const f of ["type", "code", "message", "doc_url", "request_id", "param"])
    if (!(f in e)) throw new Error(`envelope lacks ${f}`);
  if (e.request_id !== res.headers.get("x-request-id")) throw new Error("request_id differs from X-Request-Id");
  return e;
}
