// The latency harness's HTTP client: every request carries one of the keys, and the harness keeps
// a copy of each key's request budget (its token bucket) and active jobs, so that polls and
// downloads never take the tokens the next submissions need.

/** A key and the harness's copy of its token bucket (capacity = requests per minute, refilled
 * continuously), kept at or below what the service last reported, and its active jobs. */
export class KeyState {
  tokens: number;
  at = performance.now();
  active = 0;
  /** Requests sent with this key and not answered yet. */
  inflight = 0;
  constructor(
    readonly key: string,
    readonly cap: number,
    readonly maxActive: number,
  ) {
    this.tokens = cap;
  }
  level(): number {
    const now = performance.now();
    this.tokens = Math.min(this.cap, this.tokens + ((now - this.at) / 1000) * (this.cap / 60));
    this.at = now;
    return this.tokens;
  }
  take(): void {
    this.level();
    this.tokens -= 1;
  }
  /** Re-anchors the copy on the service's count (whole tokens left after this request) minus the
   * other requests still in flight, which the service may not have counted yet. A refused request
   * takes no token on the service, so the copy must not keep the one taken for it. */
  sync(h: Headers): void {
    const remaining = Number(h.get("x-ratelimit-remaining"));
    if (!h.has("x-ratelimit-remaining") || !Number.isFinite(remaining)) return;
    this.level();
    this.tokens = remaining - Math.max(0, this.inflight - 1);
  }
}

export class KeyPool {
  /** Tokens each key keeps for submissions; polls and downloads only spend above it. */
  reserve = 1;
  constructor(readonly keys: KeyState[]) {}
  private best(list: KeyState[]): KeyState | undefined {
    let out: KeyState | undefined;
    for (const k of list) if (!out || k.level() > out.level()) out = k;
    return out;
  }
  /** The key with a free job slot and the most tokens; when every slot is taken, the key with the
   * most tokens (the service then answers 429 concurrency_limit, which is what is measured). */
  forSubmit(): KeyState {
    return this.best(this.keys.filter((k) => k.active < k.maxActive)) ?? this.best(this.keys)!;
  }
  /** A key that can spend a token on background work and still hold `reserve + extra - 1`. */
  background(extra: number): KeyState | null {
    const k = this.best(this.keys);
    return k && k.level() >= this.reserve + extra ? k : null;
  }
  full(): boolean {
    return this.keys.every((k) => k.level() >= k.cap - 0.5);
  }
}

export interface Answer {
  status: number;
  json: any;
  code?: string;
  bytes: number;
  /** performance.now() when the status and headers arrived. */
  headersAt: number;
}

export async function call(
  base: string,
  key: KeyState,
  method: string,
  path: string,
  opts: { json?: unknown; form?: FormData; timeoutMs: number; idempotencyKey?: string; accept?: string },
): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${key.key}` };
  if (opts.json !== undefined) headers["content-type"] = "application/json";
  if (opts.idempotencyKey) headers["idempotency-key"] = opts.idempotencyKey;
  if (opts.accept) headers.accept = opts.accept;
  key.inflight++;
  try {
    // Never follows a redirect: the harness only talks to the URL it was given.
    const res = await fetch(base + path, {
      method,
      headers,
      body: opts.form ?? (opts.json !== undefined ? JSON.stringify(opts.json) : undefined),
      redirect: "manual",
      signal: AbortSignal.timeout(opts.timeoutMs),
    });
    const headersAt = performance.now();
    const buf = new Uint8Array(await res.arrayBuffer());
    let json: any = null;
    if ((res.headers.get("content-type") ?? "").includes("json")) {
      try {
        json = JSON.parse(new TextDecoder().decode(buf));
      } catch {
        json = null;
      }
    }
    const code = res.status >= 400 ? (json?.error?.code ?? `http_${res.status}`) : undefined;
    key.sync(res.headers);
    return { status: res.status, json, code, bytes: buf.length, headersAt };
  } catch (e) {
    const name = (e as Error).name;
    return {
      status: 0,
      json: null,
      code: name === "TimeoutError" || name === "AbortError" ? "timeout" : "network_error",
      bytes: 0,
      headersAt: performance.now(),
    };
  } finally {
    key.inflight--;
  }
}
