// The worker's calls to the object store ride out a short outage (a restart, a failover, a
// load balancer's hiccup): a call that fails with store_unavailable is tried again after a
// pause that doubles (0.25 s up to 5 s) until STORE_RETRY_S have passed since its first try;
// then the failure stands and the job fails with store_unavailable. The job's lease heartbeats
// go on meanwhile, so no other worker takes it. Only calls that can be repeated are retried:
// a put from a stream (its bytes are gone) is not.
import { config } from "../config";
import { ApiError } from "../domain/errors";
import { type BlobStore, blobStore } from "./blobs";

export interface RetryPolicy {
  /** How long after the first try a failing call is still tried again (ms). */
  budgetMs: number;
  /** The pause before the first retry (ms); it doubles up to `maxPauseMs`. */
  firstPauseMs?: number;
  maxPauseMs?: number;
  sleep?: (ms: number) => Promise<unknown>;
  now?: () => number;
}

const unavailable = (e: unknown) => e instanceof ApiError && e.code === "store_unavailable";

/** `call()`, tried again while it fails with store_unavailable and the policy's budget lasts. */
export async function retryingStoreCall<T>(call: () => Promise<T>, policy: RetryPolicy): Promise<T> {
  const { budgetMs, firstPauseMs = 250, maxPauseMs = 5000, sleep = Bun.sleep, now = Date.now } = policy;
  const start = now();
  for (let pause = firstPauseMs; ; pause = Math.min(pause * 2, maxPauseMs)) {
    try {
      return await call();
    } catch (e) {
      const left = start + budgetMs - now();
      if (!unavailable(e) || left <= 0) throw e;
      await sleep(Math.min(pause, left));
    }
  }
}

/** `store` with its repeatable calls retried under `policy`. */
export function retrying(store: BlobStore, policy: RetryPolicy): BlobStore {
  const retry = <T>(call: () => Promise<T>) => retryingStoreCall(call, policy);
  return {
    kind: store.kind,
    put: (key, source, contentType) =>
      typeof source === "string"
        ? retry(() => store.put(key, source, contentType))
        : store.put(key, source, contentType),
    get: (key) => retry(() => store.get(key)),
    localCopy: (key, dest) => retry(() => store.localCopy(key, dest)),
    size: (key) => retry(() => store.size(key)),
    delete: (key) => retry(() => store.delete(key)),
    list: (prefix) => store.list(prefix),
    presign: (key, opts) => store.presign(key, opts),
  };
}

let worker: BlobStore | null = null;
/** The object store as a job's worker uses it: its calls retried for STORE_RETRY_S. */
export function workerStore(): BlobStore {
  worker ??= retrying(blobStore(), { budgetMs: config.storeRetryS * 1000 });
  return worker;
}
