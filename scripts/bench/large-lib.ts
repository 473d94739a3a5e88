// Helpers of the large-document suite (large.bench.ts) and of its API test: the generated PDF
// (crates/engine/examples/large_pdf.rs, built on first use), a process's memory from /proc, and
// a multipart upload streamed from disk.
import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "../..");

/** Resident memory of a process, MB: now (VmRSS) and its peak since start or the last reset (VmHWM). */
export function memOf(pid: number): { rssMb: number; hwmMb: number } {
  const s = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(s)?.[1] ?? Number.NaN);
  return { rssMb: kb("VmRSS") / 1024, hwmMb: kb("VmHWM") / 1024 };
}

/** Resets a process's peak (VmHWM) to its current resident size (Linux clear_refs 5), so the
 * next read is the peak of what ran since. */
export function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
}

/** The children of `pid` whose command line contains `needle`. */
export async function childPids(pid: number, needle: string): Promise<number[]> {
  const p = Bun.spawn(["pgrep", "-P", String(pid)], { stdout: "pipe", stderr: "ignore" });
  const text = await new Response(p.stdout).text();
  await p.exited;
  return text
    .split("\n")
    .filter(Boolean)
    .map(Number)
    .filter((c) => {
      try {
        return readFileSync(`/proc/${c}/cmdline`, "utf8").includes(needle);
      } catch {
        return false;
      }
    });
}

/**
 * The generated PDF of `pages` pages in `dir` (large-<pages>.pdf), written once by the
 * large_pdf example (built with cargo into CARGO_TARGET_DIR or target/); the same arguments
 * write the same bytes, so an existing file is used as it is.
 */
export function largePdf(dir: string, pages: number): string {
  const out = join(dir, `large-${pages}.pdf`);
  if (existsSync(out)) return out;
  const build = Bun.spawnSync(["cargo", "build", "--release", "-p", "engine", "--example", "large_pdf"], {
    cwd: root,
    stdout: "inherit",
    stderr: "inherit",
  });
  if (build.exitCode !== 0) throw new Error("cargo build of the large_pdf example failed");
  const target = process.env.CARGO_TARGET_DIR || join(root, "target");
  const tmp = `${out}.part`;
  const gen = Bun.spawnSync([join(target, "release/examples/large_pdf"), tmp, "--pages", String(pages)], {
    stdout: "inherit",
    stderr: "inherit",
  });
  if (gen.exitCode !== 0) throw new Error("large_pdf failed");
  renameSync(tmp, out);
  return out;
}

/**
 * POST /files with the file streamed from disk as one multipart `file` part (the client never
 * holds it either). Returns the answer's status and body.
 */
export async function streamUpload(
  baseUrl: string,
  key: string,
  path: string,
  filename: string,
): Promise<{ status: number; json: any }> {
  const boundary = `large-${Math.random().toString(36).slice(2)}`;
  const enc = new TextEncoder();
  const head = enc.encode(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/pdf\r\n\r\n`,
  );
  const tail = enc.encode(`\r\n--${boundary}--\r\n`);
  const file = Bun.file(path).stream().getReader();
  let headSent = false;
  // One chunk per pull: the stream is read as fast as the request sends it, never ahead.
  const body = new ReadableStream<Uint8Array>({
    async pull(c) {
      if (!headSent) {
        headSent = true;
        c.enqueue(head);
        return;
      }
      const { done, value } = await file.read();
      if (value) c.enqueue(value);
      if (done) {
        c.enqueue(tail);
        c.close();
      }
    },
  });
  const res = await fetch(`${baseUrl}/files`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": `multipart/form-data; boundary=${boundary}`,
      "content-length": String(head.length + statSync(path).size + tail.length),
    },
    body,
    duplex: "half",
  } as RequestInit);
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, json: json ?? text };
}
