// docx -> pdf through a supervised, long-lived LibreOffice, one per worker process.
//
// The converter is libexec/uno_server.py run by Debian's /usr/bin/python3 (python3-uno): it
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
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { libreOfficeConfig } from "../config";
import { JobError } from "../domain/errors";
import { LineRpc } from "../ipc/line-rpc";

const SERVER = join(import.meta.dir, "../../libexec/uno_server.py");

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

type Answer = { id: number; ok?: boolean; error?: string; fallback?: boolean };

class Converter {
  private rpc: LineRpc<Answer>;
  private profile: string;
  readonly ready: Promise<void>;
  conversions = 0;
  fallbacks = 0;
  dead = false;
  readonly isolated: boolean;

  constructor() {
    this.profile = mkdtempSync(join(tmpdir(), "docproc-lo-profile-"));
    const useNetns =
      libreOfficeConfig.netns === "1" || (libreOfficeConfig.netns === "auto" && networkNamespaceAvailable());
    if (libreOfficeConfig.netns === "1" && !networkNamespaceAvailable())
      throw new ConversionError("LIBREOFFICE_NETNS=1 but `unshare --net` is not available", "internal_error");
    this.isolated = useNetns;
    const argv = useNetns
      ? ["unshare", "--net", "--", libreOfficeConfig.python, SERVER, this.profile]
      : [libreOfficeConfig.python, SERVER, this.profile];
    let readyResolve!: () => void;
    let readyReject!: (e: Error) => void;
    this.ready = new Promise<void>((res, rej) => {
      readyResolve = res;
      readyReject = rej;
    });
    this.ready.catch(() => {});
    const startTimer = setTimeout(() => {
      readyReject(
        new ConversionError(`LibreOffice did not start within ${libreOfficeConfig.startTimeoutS} s`, "internal_error"),
      );
      this.stop();
    }, libreOfficeConfig.startTimeoutS * 1000);
    // detached: the Python process leads a new process group, which stop() kills as a whole.
    this.rpc = new LineRpc<Answer>({
      argv,
      env: { ...process.env, HOME: this.profile },
      detached: true,
      stderr: "ignore",
      // The one line that answers no request: `{ ready: true }` or `{ ready: false, error }` at start-up.
      onOtherLine: (msg) => {
        if (!("ready" in msg)) return;
        clearTimeout(startTimer);
        if (msg.ready) readyResolve();
        else {
          readyReject(new ConversionError(`LibreOffice failed to start: ${msg.error}`, "internal_error"));
          this.stop();
        }
      },
      exitError: (code, signal) => new ConversionError(`LibreOffice exited during the conversion (${signal ?? code})`),
      onExit: (code, signal) => {
        clearTimeout(startTimer);
        this.dead = true;
        readyReject(new ConversionError(`LibreOffice exited during start-up (${signal ?? code})`, "internal_error"));
        rmSync(this.profile, { recursive: true, force: true });
      },
      onSpawnError: (e) =>
        readyReject(new ConversionError(`LibreOffice could not be started: ${e.message}`, "internal_error")),
    });
  }

  get pid(): number | undefined {
    return this.rpc.pid;
  }

  async convert(input: string, output: string, timeoutS: number): Promise<void> {
    await this.ready;
    this.conversions++;
    const answer = await this.rpc.request(
      { input, output },
      timeoutS * 1000,
      () => new ConversionError(`The conversion took longer than ${timeoutS} s and was stopped.`),
    );
    // After a crash the server converted once more with a one-shot soffice and is exiting.
    if (answer.fallback) {
      this.dead = true;
      this.fallbacks++;
    }
    if (!answer.ok) throw new ConversionError(`LibreOffice could not convert the document: ${answer.error}`);
  }

  /** Kills the process group (Python and soffice.bin) at once. Synchronous: safe in `exit` handlers. */
  stop() {
    this.dead = true;
    this.rpc?.kill();
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
  return current && !current.dead
    ? { running: true, pid: current.pid, conversions: current.conversions, isolated: current.isolated }
    : { running: false, conversions: 0 };
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
