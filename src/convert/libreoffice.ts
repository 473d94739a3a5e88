// docx -> pdf through a supervised, long-lived LibreOffice, one per worker process.
//
// The converter is src/convert/uno_server.py run by Debian's /usr/bin/python3 (python3-uno): it
// starts soffice.bin headless with a private profile directory and talks UNO to it over a named
// pipe (a Unix socket; no TCP port is opened). This module talks to the Python process with one
// JSON line per request over stdin/stdout.
//
// Lifecycle (see docs/conversions.md):
// - started lazily by the first conversion, so a worker that never converts pays nothing;
// - one conversion at a time (requests queue in order);
// - each conversion has a timeout (LIBREOFFICE_TIMEOUT_S, default 60 s); start-up has its own
//   (LIBREOFFICE_START_TIMEOUT_S, default 60 s);
// - the process is recycled after LIBREOFFICE_MAX_CONVERSIONS conversions (default 200) and
//   after any failure or timeout (the next conversion starts a fresh one);
// - when soffice crashes on a document (LibreOffice 7.4 crashes on idle-time comment windows of
//   some documents, e.g. the corpus's docx-comments.docx), the server retries that document once
//   with a one-shot `soffice --convert-to` (same namespace and settings) and exits; the next
//   conversion starts a fresh converter;
// - stopping kills the whole process group (Python + soffice.bin) with SIGKILL, also from the
//   worker's `exit` handler, and soffice.bin dies with the Python process (PR_SET_PDEATHSIG).
//
// Isolation: when running as root and `unshare` works, the converter runs in a new, empty
// network namespace (`unshare --net`): no interface but a down loopback, so a document's
// external links cannot reach any host. Otherwise (not root, or unshare refused, e.g. in a
// container without CAP_SYS_ADMIN) it runs in the normal namespace and relies on the profile
// settings (macros disabled, untrusted external links blocked, HTTP/HTTPS/FTP through a dead
// proxy at 127.0.0.1:9) and the load properties; set LIBREOFFICE_NETNS=0 to skip the namespace,
// LIBREOFFICE_NETNS=1 to require it (start fails when it is unavailable).
// Every input is copied alone into a fresh empty directory before loading, so relative external
// links (TargetMode="External", e.g. "tiny-picture.png") resolve to nothing.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { libreOfficeConfig } from "../config";
import { JobError } from "../domain/errors";

const SERVER = join(import.meta.dir, "uno_server.py");

/** A conversion's failure: `conversion_failed` (this document) or `internal_error` (the converter). */
export class ConversionError extends JobError {
  constructor(message: string, code: "conversion_failed" | "internal_error" = "conversion_failed") {
    super(code, message);
  }
}

let netnsUsable: boolean | null = null;
/** Whether `unshare --net` works here (root, or a user namespace is allowed). */
export function networkNamespaceAvailable(): boolean {
  if (netnsUsable === null) {
    if (process.getuid?.() !== 0) netnsUsable = false;
    else {
      const r = spawnSync("unshare", ["--net", "--", "true"], { stdio: "ignore", timeout: 5000 });
      netnsUsable = r.status === 0;
    }
  }
  return netnsUsable;
}

interface Pending {
  resolve: () => void;
  reject: (e: Error) => void;
}

class Converter {
  private proc: ChildProcess;
  private profile: string;
  private pending = new Map<number, Pending>();
  private nextId = 1;
  readonly ready: Promise<void>;
  conversions = 0;
  fallbacks = 0;
  dead = false;
  readonly isolated: boolean;

  constructor() {
    this.profile = mkdtempSync(join(tmpdir(), "docproc-lo-profile-"));
    const useNetns = libreOfficeConfig.netns === "1" || (libreOfficeConfig.netns === "auto" && networkNamespaceAvailable());
    if (libreOfficeConfig.netns === "1" && !networkNamespaceAvailable()) throw new ConversionError("LIBREOFFICE_NETNS=1 but `unshare --net` is not available", "internal_error");
    this.isolated = useNetns;
    const argv = useNetns ? ["unshare", "--net", "--", libreOfficeConfig.python, SERVER, this.profile] : [libreOfficeConfig.python, SERVER, this.profile];
    // detached: the Python process leads a new process group, which stop() kills as a whole.
    this.proc = spawn(argv[0]!, argv.slice(1), { stdio: ["pipe", "pipe", "ignore"], detached: true, env: { ...process.env, HOME: this.profile } });
    let readyResolve!: () => void;
    let readyReject!: (e: Error) => void;
    this.ready = new Promise<void>((res, rej) => {
      readyResolve = res;
      readyReject = rej;
    });
    this.ready.catch(() => {});
    const startTimer = setTimeout(() => {
      readyReject(new ConversionError(`LibreOffice did not start within ${libreOfficeConfig.startTimeoutS} s`, "internal_error"));
      this.stop();
    }, libreOfficeConfig.startTimeoutS * 1000);
    const lines = createInterface({ input: this.proc.stdout! });
    lines.on("line", (line) => {
      let msg: any;
      try {
        msg = JSON.parse(line);
      } catch {
        return;
      }
      if ("ready" in msg) {
        clearTimeout(startTimer);
        if (msg.ready) readyResolve();
        else {
          readyReject(new ConversionError(`LibreOffice failed to start: ${msg.error}`, "internal_error"));
          this.stop();
        }
        return;
      }
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      // After a crash the server converted once more with a one-shot soffice and is exiting.
      if (msg.fallback) {
        this.dead = true;
        this.fallbacks++;
      }
      if (msg.ok) p.resolve();
      else p.reject(new ConversionError(`LibreOffice could not convert the document: ${msg.error}`));
    });
    this.proc.on("exit", (code, signal) => {
      clearTimeout(startTimer);
      this.dead = true;
      readyReject(new ConversionError(`LibreOffice exited during start-up (${signal ?? code})`, "internal_error"));
      for (const p of this.pending.values()) p.reject(new ConversionError(`LibreOffice exited during the conversion (${signal ?? code})`));
      this.pending.clear();
      rmSync(this.profile, { recursive: true, force: true });
    });
    this.proc.on("error", (e) => readyReject(new ConversionError(`LibreOffice could not be started: ${e.message}`, "internal_error")));
    this.proc.stdin!.on("error", () => {});
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }

  async convert(input: string, output: string, timeoutS: number): Promise<void> {
    await this.ready;
    const id = this.nextId++;
    this.conversions++;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new ConversionError(`The conversion took longer than ${timeoutS} s and was stopped.`));
      }, timeoutS * 1000);
      this.pending.set(id, {
        resolve: () => (clearTimeout(timer), resolve()),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      this.proc.stdin!.write(JSON.stringify({ id, input, output }) + "\n");
    });
  }

  /** Kills the process group (Python and soffice.bin) at once. Synchronous: safe in `exit` handlers. */
  stop() {
    this.dead = true;
    const pid = this.proc.pid;
    if (pid) {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        try {
          process.kill(pid, "SIGKILL");
        } catch {}
      }
    }
    rmSync(this.profile, { recursive: true, force: true });
  }
}

let current: Converter | null = null;
let queue: Promise<unknown> = Promise.resolve();
let exitHookInstalled = false;

function converter(): Converter {
  if (current && !current.dead && current.conversions < libreOfficeConfig.maxConversions) return current;
  current?.stop();
  current = new Converter();
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", () => current?.stop());
  }
  return current;
}

/** The running converter's state (tests and diagnostics). */
export function libreOfficeStatus(): { running: boolean; pid?: number; conversions: number; isolated?: boolean } {
  return current && !current.dead ? { running: true, pid: current.pid, conversions: current.conversions, isolated: current.isolated } : { running: false, conversions: 0 };
}

/** Stops the converter (worker shutdown). The next conversion would start a new one. */
export function stopLibreOffice() {
  current?.stop();
  current = null;
}

/**
 * Converts a DOCX file to PDF at `output`. Rejects with a ConversionError (a JobError) whose `code` is
 * `conversion_failed` (the document cannot be converted, or the timeout was hit) or
 * `internal_error` (the converter could not start). Any failure recycles the converter.
 */
export function docxToPdf(input: string, output: string, opts: { timeoutS?: number } = {}): Promise<void> {
  const run = async () => {
    // The input alone in a fresh directory: relative external links find nothing.
    const dir = mkdtempSync(join(tmpdir(), "docproc-lo-in-"));
    const isolatedInput = join(dir, "document.docx");
    try {
      copyFileSync(input, isolatedInput);
      const c = converter();
      try {
        await c.convert(isolatedInput, output, opts.timeoutS ?? libreOfficeConfig.timeoutS);
      } catch (e) {
        // Recycle on any failure: a timeout or a crash may leave soffice in a bad state.
        c.stop();
        if (current === c) current = null;
        throw e;
      }
      if (!existsSync(output)) throw new ConversionError("LibreOffice reported success but wrote no PDF.");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const p = queue.then(run, run);
  queue = p.catch(() => {});
  return p;
}
