// All environment parsing, in one place. Every other module reads `config`, never process.env,
// so the operator contract (the README's Configuration tables) and its defaults live here alone.
import { availableParallelism } from "node:os";
import { resolve } from "node:path";

function int(name: string, fallback: number, min = 0): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw)) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  const n = Number(raw);
  if (n < min) throw new Error(`${name} must be >= ${min}`);
  return n;
}

function list(name: string, fallback: number[]): number[] {
  const raw = process.env[name];
  if (!raw) return fallback;
  const parts = raw.split(",").map((s) => s.trim());
  if (parts.some((p) => !/^\d+$/.test(p))) throw new Error(`${name} must be a comma-separated list of seconds`);
  return parts.map(Number);
}

const host = process.env.HOST || "127.0.0.1";
const port = int("PORT", 8080);

export const config = {
  host,
  port,
  /** Public base URL of the API, used in doc_url and download_url. */
  baseUrl: (process.env.PUBLIC_BASE_URL || `http://${host}:${port}`).replace(/\/$/, "") + "/api/v1",
  databaseUrl: process.env.DATABASE_URL || "",
  dataDir: resolve(process.env.DATA_DIR || "./.data"),
  workers: int("WORKERS", availableParallelism(), 0),
  s3:
    process.env.S3_ENDPOINT && process.env.S3_BUCKET
      ? {
          endpoint: process.env.S3_ENDPOINT,
          bucket: process.env.S3_BUCKET,
          accessKeyId: process.env.S3_ACCESS_KEY_ID || "",
          secretAccessKey: process.env.S3_SECRET_ACCESS_KEY || "",
          region: process.env.S3_REGION || "us-east-1",
        }
      : null,
  webhookRetryDelaysS: list("WEBHOOK_RETRY_DELAYS_S", [60, 300, 1800, 7200, 43200]),
  webhookAllowPrivateTargets: process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS === "1",
  fileTtlS: int("FILE_TTL_S", 86400, 1),
  sweepIntervalS: int("SWEEP_INTERVAL_S", 60, 1),
  /** Not in the contract: how often the sweeper looks for blobs no row references. */
  orphanCheckIntervalS: int("ORPHAN_CHECK_INTERVAL_S", 3600, 1),
  /** Not in the contract: how old an unreferenced blob or scratch file must be before it is removed
   * (longer than an upload or a job attempt can take, so work in progress is never touched). */
  orphanGraceS: int("ORPHAN_GRACE_S", 3600, 1),
  sandboxOcr: (process.env.SANDBOX_OCR === "fixture" ? "fixture" : "real") as "real" | "fixture",
  /** Not in the contract: maximum upload size in bytes (spec: "not shown"). */
  maxUploadBytes: int("MAX_UPLOAD_BYTES", 100 * 1024 * 1024, 1),
  /** Not in the contract: wall-clock limit for receiving one upload (408 request_timeout after). */
  uploadTimeoutS: int("UPLOAD_TIMEOUT_S", 900, 1),
  /** Not in the contract: a request body (upload or JSON) that sends no byte for this long is cut
   * with 408 request_timeout and nothing is stored (a stalled client behind a load balancer). */
  bodyStallTimeoutS: int("BODY_STALL_TIMEOUT_S", 10, 1),
  /** Not in the contract: how long a worker's call to the object store is tried again while the
   * store is unreachable, before the job fails with store_unavailable. */
  storeRetryS: int("STORE_RETRY_S", 30, 0),
  /** Not in the contract: wall-clock limit per job (spec: "not shown"). */
  jobTimeoutS: int("JOB_TIMEOUT_S", 600, 1),
  /** Not in the contract: port of the embedded Postgres when DATABASE_URL is unset. */
  embeddedPgPort: int("EMBEDDED_PG_PORT", 54329, 1),
  /** Not in the contract: the lowest level log.ts writes (debug, info, warn, error). */
  logLevel: process.env.LOG_LEVEL || "info",
  /** Not in the contract: when set, GET /metrics needs `Authorization: Bearer <token>`. */
  metricsToken: process.env.METRICS_TOKEN || "",
  /** Set by the supervisor (main.ts) for each child process it starts; unset when started by hand. */
  workerName: process.env.WORKER_NAME,
  /** Set by the supervisor with WORKER_NAME: its own pid, as it passed it. */
  supervisorPid: Number(process.env.SUPERVISOR_PID) || undefined,
  /** Not in the contract: threads one render job may use; default: the engine's (all cores). */
  renderThreads: process.env.RENDER_THREADS ? Number(process.env.RENDER_THREADS) : undefined,
  /** Not in the contract: OCR threads per process (a positive integer), else chosen from the cores. */
  ocrThreads: ((n) => (Number.isInteger(n) && n > 0 ? n : null))(Number(process.env.OCR_THREADS)),
  /** Not in the contract: seconds a page may take in Tesseract before that page fails with
   * `ocr_timeout` in the result (the job goes on with the other pages). */
  ocrPageTimeoutS: int("OCR_PAGE_TIMEOUT_S", 120, 1),
  /** Not in the contract: Tesseract's traineddata directory (its languages are offered); empty:
   * Debian's. The engine reads the same variable (crates/ocr/src/tesseract/tessdata.rs). */
  tessdataPrefix: process.env.TESSDATA_PREFIX || "",
  /** Not in the contract: OCR_MACHINE_LOCK=0 lets every worker run the models at once. */
  ocrMachineLock: process.env.OCR_MACHINE_LOCK !== "0",
  /** Not in the contract: the engine's thread pool per process (ENGINE_THREADS); 0 = the number of cores.
   * The engine's other settings are for comparisons and diagnostics only: the benches set them
   * (scripts/bench/engine-switches.ts), never the service. */
  engineThreads: int("ENGINE_THREADS", 0),
  /** Page-parallel jobs (docs/scaling.md): FANOUT=0 runs every job whole on one worker. */
  fanout: process.env.FANOUT !== "0",
  /** Tasks a page-parallel job aims at per live worker (docs/scaling.md, "Task size"). */
  fanoutTasksPerWorker: int("FANOUT_TASKS_PER_WORKER", 4, 1),
} as const;

export type Config = typeof config;

/** Queue timing (not in the contract; tests shorten them). */
export const queueConfig = {
  /** A running job's lease; heartbeats renew it, the reaper retries or fails it after. */
  leaseS: Number(process.env.JOB_LEASE_S || 30),
  heartbeatMs: Math.max(200, Math.floor((Number(process.env.JOB_LEASE_S || 30) * 1000) / 4)),
  /** Fallback poll when no NOTIFY arrives (missed notifications, delayed retries). */
  pollMs: Number(process.env.QUEUE_POLL_MS || 2000),
  /** Fault-injection for tests only: milliseconds a worker waits per input page before running. */
  testPageDelayMs: Number(process.env.JOB_TEST_PAGE_DELAY_MS || 0),
};

const workerStopGraceS = int("WORKER_STOP_GRACE_S", 20, 0);
const checkpointWaitMs = 3_000;
/**
 * Stopping (not in the contract; docs/operating.md, "Stopping"). The defaults fit Kubernetes'
 * terminationGracePeriodSeconds of 30 (deploy/k8s): a worker is gone within about 25 s.
 */
export const stopConfig = {
  /** WORKER_STOP_GRACE_S: after SIGTERM, how long a worker lets its running job go on before it
   * cancels the job and hands it back to the queue. */
  jobGraceMs: workerStopGraceS * 1000,
  /** After that cancel, how long the worker waits for the engine's next page checkpoint before it
   * hands the job back anyway (and exits, which ends the engine's work). */
  checkpointWaitMs,
  /** The supervisor kills a child still running this long after passing SIGTERM on: above an API
   * node's drain (15 s) and a worker's grace, checkpoint wait and release. */
  killAfterMs: Math.max(15_000, workerStopGraceS * 1000 + checkpointWaitMs + 2_000),
};

/** LibreOffice conversions (convert/libreoffice.ts; not in the contract; tests adjust them). */
export const libreOfficeConfig = {
  python: process.env.LIBREOFFICE_PYTHON || "/usr/bin/python3",
  /** Wall-clock limit of one conversion. */
  timeoutS: Number(process.env.LIBREOFFICE_TIMEOUT_S || 60),
  startTimeoutS: Number(process.env.LIBREOFFICE_START_TIMEOUT_S || 60),
  /** The process is recycled after this many conversions. */
  maxConversions: Number(process.env.LIBREOFFICE_MAX_CONVERSIONS || 200),
  /** auto: a network namespace when `unshare --net` works; 0: never; 1: required. */
  netns: (process.env.LIBREOFFICE_NETNS ?? "auto") as "auto" | "0" | "1",
};

/**
 * Secrets, kept apart from `config` so they are never printed or passed along with it.
 * WEBHOOK_SECRET_KEY: the server key that encrypts webhook signing secrets at rest (parsed and
 * checked by delivery/secrets.ts); unset = a key generated once and kept in the database.
 */
export const secretsConfig = {
  webhookSecretKey: process.env.WEBHOOK_SECRET_KEY || null,
};
