// Helpers for tests that wait on conditions (instead of fixed sleeps) and that start extra
// service processes themselves (a second API node, an API with an unreachable database, a
// service on the embedded Postgres).
import type { Subprocess } from "bun";
import { join } from "node:path";
import { root } from "./service";

/** Polls `probe` until it returns a value other than undefined/false, or throws after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 15_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v as T;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await Bun.sleep(everyMs);
  }
}

export interface Spawned {
  proc: Subprocess;
  output: () => string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

/** Spawns `bun <script> ...args` in the project root with `env` (merged over process.env, `undefined` removes). */
export function spawnBun(script: string, args: string[], env: Record<string, string | undefined>): Spawned {
  const merged: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, LOG_LEVEL: process.env.TEST_LOG_LEVEL || "warn", ...env }))
    if (v !== undefined) merged[k] = v;
  const proc = Bun.spawn(["bun", join(root, script), ...args], {
    cwd: root,
    env: merged,
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  const drain = async (s: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    for await (const chunk of s) out += dec.decode(chunk);
  };
  void drain(proc.stdout as ReadableStream<Uint8Array>);
  void drain(proc.stderr as ReadableStream<Uint8Array>);
  return {
    proc,
    output: () => out,
    async stop(graceMs = 15_000) {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
      const t = setTimeout(() => proc.kill("SIGKILL"), graceMs);
      const code = await proc.exited;
      clearTimeout(t);
      return code;
    },
  };
}

/** Waits until GET {origin}/healthz answers `status`; fails early if the process exits. */
export async function waitHealthy(origin: string, p: Spawned, status = 200, timeoutMs = 30_000): Promise<void> {
  await waitFor(
    `${origin}/healthz to answer ${status}`,
    async () => {
      if (p.proc.exitCode !== null) throw new Error(`process exited (${p.proc.exitCode}):\n${p.output()}`);
      try {
        const r = await fetch(`${origin}/healthz`);
        return r.status === status;
      } catch {
        return false;
      }
    },
    timeoutMs,
  );
}

/** Direct child pids of `pid` with their command lines. */
export async function childrenOf(pid: number): Promise<{ pid: number; cmd: string }[]> {
  const p = Bun.spawn(["pgrep", "-P", String(pid)], { stdout: "pipe", stderr: "ignore" });
  const text = await new Response(p.stdout).text();
  await p.exited;
  const out: { pid: number; cmd: string }[] = [];
  for (const line of text.split("\n").filter(Boolean)) {
    const child = Number(line.trim());
    try {
      const cmd = (await Bun.file(`/proc/${child}/cmdline`).text()).split("\0").join(" ");
      out.push({ pid: child, cmd });
    } catch {
      // exited between pgrep and the read
    }
  }
  return out;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
