// The API side of the inspector (roles/inspector.ts): one long-lived child process, requests
// as JSON lines, a timeout per request. A crash or timeout restarts the child and fails only
// the requests in flight.
import { join } from "node:path";
import type { Subprocess } from "bun";
import type { Identified } from "./native";
import { log } from "../log";

const timeoutMs = 20_000;

interface Pending {
  resolve: (r: Identified) => void;
  reject: (e: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

let child: Subprocess<"pipe", "pipe", "inherit"> | null = null;
let nextId = 1;
const pending = new Map<number, Pending>();

function failAll(reason: string) {
  for (const [id, p] of pending) {
    clearTimeout(p.timer);
    p.reject(new Error(reason));
    pending.delete(id);
  }
}

function start() {
  const proc = Bun.spawn(["bun", join(import.meta.dir, "../roles/inspector.ts")], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
    onExit: (_p, code, signal) => {
      if (child === proc) child = null;
      if (pending.size) log.warn("inspector exited with requests in flight", { code, signal });
      failAll("inspector_crashed");
    },
  });
  child = proc;
  void (async () => {
    const dec = new TextDecoder();
    let buf = "";
    for await (const chunk of proc.stdout) {
      buf += dec.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        try {
          const msg = JSON.parse(line) as { id: number; result?: Identified; error?: string };
          const p = pending.get(msg.id);
          if (!p) continue;
          pending.delete(msg.id);
          clearTimeout(p.timer);
          if (msg.result) p.resolve(msg.result);
          else p.reject(new Error(msg.error ?? "inspector error"));
        } catch {
          log.warn("inspector wrote a malformed line");
        }
      }
    }
  })();
  return proc;
}

/** Identifies the document at `path` in the inspector child. */
export function inspect(path: string): Promise<Identified> {
  const proc = child ?? start();
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      pending.delete(id);
      reject(new Error("inspector_timeout"));
      // A stuck identification means hostile input: restart the child so it cannot pile up.
      proc.kill("SIGKILL");
    }, timeoutMs);
    pending.set(id, { resolve, reject, timer });
    proc.stdin.write(JSON.stringify({ id, path }) + "\n");
    proc.stdin.flush();
  });
}
