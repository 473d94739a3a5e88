// The console's only way to the API: fetch with the Bearer key from sessionStorage (never a
// cookie), the spec's error envelope turned into ApiProblem, and the rate limit respected:
// a 429 rate_limited waits Retry-After and retries; the remaining budget is tracked for polling.
export const apiBase = "/api/v1";
const keyStorage = "docproc.console.key";

export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | null = null,
    readonly docUrl: string | null = null,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

export const rate = { limit: 0, remaining: 0, listeners: new Set<() => void>() };

export function savedKey(): string | null {
  return sessionStorage.getItem(keyStorage);
}
export function saveKey(key: string | null): void {
  if (key) sessionStorage.setItem(keyStorage, key);
  else sessionStorage.removeItem(keyStorage);
}

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((res, rej) => {
    const t = setTimeout(res, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        rej(signal.reason);
      },
      { once: true },
    );
  });

export interface CallOptions {
  json?: unknown;
  form?: FormData;
  query?: Record<string, string | number | undefined>;
  headers?: Record<string, string>;
  /** Return the raw Response (downloads). */
  raw?: boolean;
  /** Use this key instead of the saved one (sign in). */
  key?: string;
  signal?: AbortSignal;
}

export async function call<T = any>(method: string, path: string, opts: CallOptions = {}): Promise<T> {
  const url = new URL(apiBase + path, location.origin);
  for (const [k, v] of Object.entries(opts.query ?? {}))
    if (v !== undefined && v !== "") url.searchParams.set(k, String(v));
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  const key = opts.key ?? savedKey();
  if (key) headers.authorization = `Bearer ${key}`;
  let body: BodyInit | undefined;
  if (opts.form) body = opts.form;
  else if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers["content-type"] = "application/json";
  }
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(url, { method, headers, body, credentials: "omit", signal: opts.signal });
    const limit = res.headers.get("x-ratelimit-limit");
    if (limit) {
      rate.limit = Number(limit);
      rate.remaining = Number(res.headers.get("x-ratelimit-remaining") ?? 0);
      rate.listeners.forEach((l) => l());
    }
    if (res.ok && opts.raw) return res as T;
    const text = await res.text();
    let parsed: any = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    if (res.ok) return parsed as T;
    const e = parsed?.error;
    // The request was refused before it did anything, so repeating it is safe.
    if (res.status === 429 && e?.code === "rate_limited" && attempt < 5) {
      const wait = Math.min(60, Number(res.headers.get("retry-after") ?? "2") || 2);
      await sleep(wait * 1000, opts.signal);
      continue;
    }
    if (e)
      throw new ApiProblem(res.status, e.code, e.message, e.request_id ?? null, e.doc_url ?? null, e.param ?? null);
    throw new ApiProblem(res.status, "http_error", `HTTP ${res.status} ${res.statusText}`);
  }
}

/**
 * The wait before the next poll: grows from 0.5 s by 1.6x up to 5 s, and when the key's
 * request budget runs low, never faster than the bucket refills (limit per minute).
 */
export function nextPollDelay(previousMs: number): number {
  let next = previousMs ? Math.min(5000, previousMs * 1.6) : 500;
  if (rate.limit && rate.remaining < rate.limit / 3) next = Math.max(next, (60_000 / rate.limit) * 2);
  return next;
}

/** An error as text for the page, with the request id to quote. */
export function describe(e: unknown): string {
  if (e instanceof ApiProblem) return `${e.message} (${e.code}${e.requestId ? `, request ${e.requestId}` : ""})`;
  return e instanceof Error ? e.message : String(e);
}
