// Shared helpers of the render/redact/compress suites: the engine's CLI (examples/pagework.rs),
// timed runs of external tools with peak RSS (GNU time), percentiles.
import { existsSync } from "node:fs";
import { join } from "node:path";

export const target = process.env.CARGO_TARGET_DIR || "/work/cargo-target";
export function pagework(root: string): string {
  const bin = join(target, "release/examples/pagework");
  if (!existsSync(bin)) {
    const p = Bun.spawnSync(["cargo", "build", "--release", "-p", "engine", "--example", "pagework"], { cwd: root, env: { ...process.env, CARGO_TARGET_DIR: target }, stderr: "inherit" });
    if (p.exitCode !== 0) throw new Error("building examples/pagework failed");
  }
  return bin;
}

export interface Timed { ms: number; rssMb: number; code: number; out: string }
/** Runs a command under /usr/bin/time: wall ms and peak RSS. */
export function timed(cmd: string[], env: Record<string, string> = {}): Timed {
  const t0 = performance.now();
  const p = Bun.spawnSync(["/usr/bin/time", "-f", "RSSKB=%M", ...cmd], { stdout: "pipe", stderr: "pipe", env: { ...process.env, ...env } });
  const ms = performance.now() - t0;
  const err = p.stderr.toString();
  const rss = Number(/RSSKB=(\d+)/.exec(err)?.[1] ?? 0) / 1024;
  return { ms, rssMb: rss, code: p.exitCode ?? -1, out: p.stdout.toString() + err };
}

export function pct(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
export const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : "—");
export const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : "—");
