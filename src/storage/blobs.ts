// The blob store on local disk under DATA_DIR/blobs: uploaded inputs and job results.
// Keys are relative paths; callers never build filesystem paths themselves.
import { mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { config } from "../config";

const root = join(config.dataDir, "blobs");

export function blobPath(key: string): string {
  if (key.includes("..") || key.startsWith("/")) throw new Error(`bad blob key ${key}`);
  return join(root, key);
}

export function fileKey(fileId: string): string {
  return `files/${fileId.slice(0, 2)}/${fileId}`;
}

/** Where all of a job's results live (the sweeper removes this directory). */
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

export function ensureDirFor(key: string): string {
  const p = blobPath(key);
  mkdirSync(dirname(p), { recursive: true });
  return p;
}

export function deleteBlob(key: string | null | undefined): void {
  if (!key) return;
  rmSync(blobPath(key), { force: true });
}

export function blobSize(key: string): number | null {
  try {
    return statSync(blobPath(key)).size;
  } catch {
    return null;
  }
}

export function scratchDir(): string {
  const d = join(config.dataDir, "tmp");
  mkdirSync(d, { recursive: true });
  return d;
}

export interface ListedBlob {
  key: string;
  /** Last write, ms since the epoch. */
  modifiedMs: number;
}

/**
 * Every blob whose key starts with `prefix/` ("files" or "results"), for the orphan check.
 * The local store walks its directory; an object store lists the same keys (ListObjectsV2 with
 * this prefix, `LastModified` as modifiedMs) here.
 */
export function* listBlobs(prefix: "files" | "results"): Generator<ListedBlob> {
  const walk = function* (dir: string, key: string): Generator<ListedBlob> {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return; // not created yet, or removed while walking
    }
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.isDirectory()) yield* walk(path, `${key}/${e.name}`);
      else {
        try {
          yield { key: `${key}/${e.name}`, modifiedMs: statSync(path).mtimeMs };
        } catch {}
      }
    }
  };
  yield* walk(join(root, prefix), prefix);
}
