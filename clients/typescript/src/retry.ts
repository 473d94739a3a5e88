// Sends a request, retrying network errors, 429, 503 and 409 idempotency_in_progress with
// exponential backoff that honours Retry-After: stripe-node's policy (RequestSender.ts).
import { ConnectionError } from "./errors";

export interface RetryPolicy {
  /** Retries after the first attempt (stripe-node's default: 2). */
  maxNetworkRetries: number;
  /** First backoff, doubled per retry up to maxDelayMs, with jitter (stripe-node: 0.5 s, 5 s). */
  initialDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After above this is not waited out: the error is returned instead (stripe-python: 60 s). */
  maxRetryAfterS: number;
}

/** Any fetch that takes a Request (the global fetch qualifies). */
export type FetchLike = (request: Request) => Promise<Response>;

export const defaultRetryPolicy: RetryPolicy = {
  maxNetworkRetries: 2,
  initialDelayMs: 500,
  maxDelayMs: 5000,
  maxRetryAfterS: 60,
};

/** Backoff before retry number `retry` (1-based): exponential, jittered to 50-100 %, never below the initial delay. */
export function backoffMs(retry: number, p: RetryPolicy, retryAfterS: number | null): number {
  let ms = Math.min(p.initialDelayMs * 2 ** (retry - 1), p.maxDelayMs);
  ms = Math.max(p.initialDelayMs, ms * 0.5 * (1 + Math.random()));
  return retryAfterS === null ? ms : Math.max(ms, retryAfterS * 1000);
}

function retryAfterOf(res: Response): number | null {
  const v = res.headers.get("retry-after");
  return v && /^\d+$/.test(v) ? Number(v) : null;
}

async function retryable(res: Response, p: RetryPolicy): Promise<boolean> {
  if (res.status === 429 || res.status === 503) {
    const ra = retryAfterOf(res);
    return ra === null || ra <= p.maxRetryAfterS;
  }
  if (res.status === 409) {
    // Only the conflict that a retry resolves: the first request with this key still running.
    const body = (await res
      .clone()
      .json()
      .catch(() => null)) as { error?: { code?: string } } | null;
    return body?.error?.code === "idempotency_in_progress";
  }
  return false;
}

/**
 * `fetch` with retries. Callers make repeats harmless: POST /jobs always carries an
 * Idempotency-Key (the same one on every attempt, since the request is cloned).
 */
export function retryingFetch(
  base: FetchLike,
  policy: RetryPolicy,
  sleep = (ms: number) => new Promise((r) => setTimeout(r, ms)),
) {
  return async function send(request: Request): Promise<Response> {
    for (let retry = 0; ; retry++) {
      let res: Response | undefined;
      let failure: unknown;
      try {
        res = await base(request.clone() as Request);
      } catch (e) {
        if (request.signal?.aborted) throw e;
        failure = e;
      }
      const last = retry >= policy.maxNetworkRetries;
      if (res && (last || !(await retryable(res, policy)))) return res;
      if (!res && last)
        throw new ConnectionError(
          `${request.method} ${request.url} failed after ${retry + 1} attempt(s): ${String(failure)}`,
          { cause: failure },
        );
      await res?.body?.cancel();
      await sleep(backoffMs(retry + 1, policy, res ? retryAfterOf(res) : null));
    }
  };
}
