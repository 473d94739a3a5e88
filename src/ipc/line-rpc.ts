// Requests to a long-lived child process as JSON lines: each request carries an `id`, the line
// that answers it carries the same `id`; a timeout per request; when the child exits, every
// request in flight fails. The inspector (engine/inspector-client.ts) and the LibreOffice
// converter (convert/libreoffice.ts) are its two users; each reads its answers' other fields.
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";

export interface LineRpcOptions {
  argv: string[];
  env?: NodeJS.ProcessEnv;
  /** The child's stderr: shared with this process (default), or discarded. */
  stderr?: "inherit" | "ignore";
  /** The child leads a new process group (killGroup() ends it with its own children). */
  detached?: boolean;
  /** A line whose `id` answers no request in flight: a start-up message, or a late answer. */
  onOtherLine?: (message: Record<string, unknown>) => void;
  /** A line that is not JSON. */
  onMalformedLine?: (line: string) => void;
  /** After the child exited and the `failed` requests in flight were rejected with `exitError`. */
  onExit?: (code: number | null, signal: NodeJS.Signals | null, failed: number) => void;
  /** The error of the requests in flight when the child exits. */
  exitError: (code: number | null, signal: NodeJS.Signals | null) => Error;
  /** The child could not be started at all (spawn error). */
  onSpawnError?: (e: Error) => void;
}

interface InFlight {
  resolve: (message: Record<string, unknown>) => void;
  reject: (e: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

export class LineRpc<Answer extends { id: number }> {
  readonly proc: ChildProcess;
  private readonly inFlight = new Map<number, InFlight>();
  private nextId = 1;
  exited = false;

  constructor(private readonly options: LineRpcOptions) {
    const [cmd, ...args] = options.argv;
    this.proc = spawn(cmd!, args, {
      stdio: ["pipe", "pipe", options.stderr ?? "inherit"],
      detached: options.detached,
      env: options.env,
    });
    createInterface({ input: this.proc.stdout! }).on("line", (line) => this.receive(line));
    this.proc.on("exit", (code, signal) => {
      this.exited = true;
      const failed = this.inFlight.size;
      for (const p of this.inFlight.values()) {
        clearTimeout(p.timer);
        p.reject(options.exitError(code, signal));
      }
      this.inFlight.clear();
      options.onExit?.(code, signal, failed);
    });
    this.proc.on("error", (e) => options.onSpawnError?.(e));
    // A write to a child that just died is reported by its exit, not here.
    this.proc.stdin!.on("error", () => {});
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }

  /** Requests in flight. */
  get pending(): number {
    return this.inFlight.size;
  }

  /**
   * Sends `{ id, ...body }` and resolves with the line that answers it. After `timeoutMs` the
   * request rejects with `onTimeout()`'s error (which may also act on the child).
   */
  request(body: Record<string, unknown>, timeoutMs: number, onTimeout: () => Error): Promise<Answer> {
    const id = this.nextId++;
    return new Promise<Answer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.inFlight.delete(id);
        reject(onTimeout());
      }, timeoutMs);
      this.inFlight.set(id, { resolve: resolve as (m: Record<string, unknown>) => void, reject, timer });
      this.proc.stdin!.write(`${JSON.stringify({ id, ...body })}\n`);
    });
  }

  /** SIGKILL to the child (or, when detached, to its whole process group). */
  kill(): void {
    const pid = this.proc.pid;
    if (!pid) return;
    try {
      process.kill(this.options.detached ? -pid : pid, "SIGKILL");
    } catch {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
  }

  private receive(line: string): void {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(line);
    } catch {
      this.options.onMalformedLine?.(line);
      return;
    }
    const p = typeof message.id === "number" ? this.inFlight.get(message.id) : undefined;
    if (!p) {
      this.options.onOtherLine?.(message);
      return;
    }
    this.inFlight.delete(message.id as number);
    clearTimeout(p.timer);
    p.resolve(message);
  }
}
