// The blob store: uploaded inputs and job results, on local disk under DATA_DIR/blobs (default)
// or in an S3-compatible bucket (S3_*). Keys are relative paths; callers never build paths.
import { mkdirSync, statSync } from "node:fs";
import { rename, rm, readdir } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { config } from "../config";
import { ApiError } from "../domain/errors";

/** The one interface both implementations offer (small on purpose: see docs/operating.md, "The blob store"). */
export interface BlobStore {
  readonly kind: "disk" | "s3";
  /** Stores `source` (a local file, which may be moved, or a stream) under `key`; returns its size. */
  put(key: string, source: string | ReadableStream<Uint8Array>, contentType?: string): Promise<number>;
  /** The object's bytes as a stream, or null when there is none. */
  get(key: string): Promise<ReadableStream<Uint8Array> | null>;
  /** A local file with the object's bytes: the blob itself on disk, else a copy streamed to `dest`. */
  localCopy(key: string, dest: string): Promise<string>;
  /** The object's size in bytes, or null when there is none. */
  size(key: string): Promise<number | null>;
  delete(key: string): Promise<void>;
  /** Objects under a prefix, for the orphan check and for deleting a result directory. */
  list(prefix: string): AsyncIterable<ListedBlob>;
  /** A presigned URL (S3 only; the disk store throws presigned_unavailable). */
  presign(
    key: string,
    opts: { method: "GET" | "PUT"; expiresInS: number; contentType?: string; downloadName?: string },
  ): string;
}

export interface ListedBlob {
  key: string;
  /** Last write, ms since the epoch. */
  modifiedMs: number;
}

export function fileKey(fileId: string): string {
  return `files/${fileId.slice(0, 2)}/${fileId}`;
}

/** Where all of a job's results live (the sweeper removes this prefix). */
export function resultDirKey(jobId: string): string {
  return `results/${jobId.slice(0, 2)}/${jobId}`;
}

/**
 * One attempt's result. Per attempt, so that a stalled worker whose job was retried elsewhere
 * can only ever overwrite or delete its own output, never the result of the attempt that won.
 */
export function resultKey(jobId: string, attempt: number, filename: string): string {
  return `${resultDirKey(jobId)}/${attempt}/${filename}`;
}

/** One attempt of one task of a page-parallel job: its partial result, under the job's results
 * (so the sweeper's removal of the job's results removes it too), per attempt like resultKey. */
export function partialKey(jobId: string, seq: number, attempt: number, name: string): string {
  return `${resultDirKey(jobId)}/tasks/${seq}-${attempt}/${name}`;
}

function checkKey(key: string): string {
  if (key.includes("..") || key.startsWith("/")) throw new Error(`bad blob key ${key}`);
  return key;
}

/** Scratch space private to this process's host: uploads in flight, job work directories. */
export function scratchDir(): string {
  const d = join(config.dataDir, "tmp");
  mkdirSync(d, { recursive: true });
  return d;
}

class DiskStore implements BlobStore {
  readonly kind = "disk" as const;
  constructor(private root: string) {}
  private path(key: string) {
    return join(this.root, checkKey(key));
  }
  async put(key: string, source: string | ReadableStream<Uint8Array>) {
    const p = this.path(key);
    mkdirSync(dirname(p), { recursive: true });
    if (typeof source === "string") await rename(source, p);
    else await Bun.write(p, new Response(source));
    return statSync(p).size;
  }
  async get(key: string) {
    const f = Bun.file(this.path(key));
    return (await f.exists()) ? f.stream() : null;
  }
  async localCopy(key: string) {
    return this.path(key);
  }
  async size(key: string) {
    try {
      return statSync(this.path(key)).size;
    } catch {
      return null;
    }
  }
  async delete(key: string) {
    await rm(this.path(key), { force: true });
  }
  async *list(prefix: string) {
    let entries: string[];
    try {
      entries = await readdir(this.path(prefix), { recursive: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const full = join(this.path(prefix), e);
      try {
        const st = statSync(full);
        if (st.isFile()) yield { key: relative(this.root, full), modifiedMs: st.mtimeMs };
      } catch {} // removed while walking
    }
  }
  presign(): string {
    throw new ApiError(
      "presigned_unavailable",
      "Presigned URLs need an object store, and none is configured; use multipart upload and format=download.",
    );
  }
}

/** Any failure to reach or use the object store, as the envelope's 503 (safe to retry). */
export function storeUnavailable(e: unknown): ApiError {
  return new ApiError(
    "store_unavailable",
    `The object store is unreachable or failed (${(e as { code?: string })?.code ?? "error"}); safe to retry.`,
  );
}

class S3Store implements BlobStore {
  readonly kind = "s3" as const;
  private client: Bun.S3Client;
  constructor(s3: NonNullable<typeof config.s3>) {
    this.client = new Bun.S3Client({
      endpoint: s3.endpoint,
      bucket: s3.bucket,
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      region: s3.region,
    });
  }
  private async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof ApiError) throw e;
      onStoreError?.(e);
      throw storeUnavailable(e);
    }
  }
  async put(key: string, source: string | ReadableStream<Uint8Array>, contentType?: string) {
    return this.guard(async () => {
      // Bun streams a file or a stream to S3 (multipart upload above its part size).
      const body = typeof source === "string" ? Bun.file(source) : new Response(source);
      const n = await this.client.file(checkKey(key)).write(body, { type: contentType ?? "application/octet-stream" });
      if (typeof source === "string") await rm(source, { force: true });
      return n;
    });
  }
  async get(key: string) {
    return this.guard(async () => {
      const f = this.client.file(checkKey(key));
      return (await f.exists()) ? f.stream() : null;
    });
  }
  async localCopy(key: string, dest: string) {
    return this.guard(async () => {
      mkdirSync(dirname(dest), { recursive: true });
      await Bun.write(dest, this.client.file(checkKey(key)));
      return dest;
    });
  }
  async size(key: string) {
    return this.guard(async () => {
      try {
        return (await this.client.file(checkKey(key)).stat()).size;
      } catch (e) {
        if ((e as { code?: string }).code === "NoSuchKey") return null;
        throw e;
      }
    });
  }
  async delete(key: string) {
    await this.guard(() => this.client.file(checkKey(key)).delete());
  }
  async *list(prefix: string) {
    let token: string | undefined;
    do {
      const page = await this.guard(() =>
        this.client.list({ prefix: checkKey(prefix), continuationToken: token, maxKeys: 1000 }),
      );
      for (const o of page.contents ?? [])
        yield { key: o.key, modifiedMs: o.lastModified ? Date.parse(o.lastModified) : 0 };
      token = page.isTruncated ? page.nextContinuationToken : undefined;
    } while (token);
  }
  presign(
    key: string,
    opts: { method: "GET" | "PUT"; expiresInS: number; contentType?: string; downloadName?: string },
  ) {
    return this.client.file(checkKey(key)).presign({
      method: opts.method,
      expiresIn: opts.expiresInS,
      ...(opts.contentType ? { type: opts.contentType } : {}),
      ...(opts.downloadName
        ? { contentDisposition: `attachment; filename="${opts.downloadName.replace(/[^\w.-]/g, "_")}"` }
        : {}),
    });
  }
}

/** Set by the metrics module: counts blob store errors without this layer importing it. */
let onStoreError: ((e: unknown) => void) | null = null;
export function observeStoreErrors(fn: (e: unknown) => void) {
  onStoreError = fn;
}

let instance: BlobStore | null = null;
export function blobStore(): BlobStore {
  instance ??= config.s3 ? new S3Store(config.s3) : new DiskStore(join(config.dataDir, "blobs"));
  return instance;
}

/** Deletes every object under a prefix (a job's results). */
export async function deletePrefix(prefix: string): Promise<void> {
  const store = blobStore();
  const keys: string[] = [];
  for await (const b of store.list(prefix)) keys.push(b.key);
  for (const k of keys) await store.delete(k);
}
