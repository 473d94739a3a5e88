// What the soak test (soak.ts) watches for leaks: the service's process tree sampled from /proc
// (RSS and open file descriptors per process, and the RSS slope), and files left behind.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Sample {
  t: number;
  rssKb: number;
  fds: number;
}
export const procs = new Map<number, { label: string; samples: Sample[] }>();

function children(pid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) out.push(Number(d));
    } catch {}
  }
  return out;
}

function tree(root: number): number[] {
  const all = [root];
  for (let i = 0; i < all.length; i++) all.push(...children(all[i]!));
  return all;
}

function label(pid: number): string {
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
    const s = cmd.join(" ");
    for (const r of ["main.ts", "roles/api.ts", "roles/worker.ts", "roles/inspector.ts", "uno_server.py", "soffice"])
      if (s.includes(r)) return r.replace("roles/", "");
    return (cmd[0] ?? "?").split("/").pop()!;
  } catch {
    return "?";
  }
}

export function sampleAll(rootPid: number) {
  const t = Date.now();
  for (const pid of tree(rootPid)) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      const fds = readdirSync(`/proc/${pid}/fd`).length;
      let p = procs.get(pid);
      if (!p) procs.set(pid, (p = { label: label(pid), samples: [] }));
      p.samples.push({ t, rssKb: rss, fds });
    } catch {}
  }
}

export function slopeMbPerHour(s: Sample[]): number {
  const n = s.length;
  if (n < 3) return NaN;
  const xs = s.map((x) => x.t / 3_600_000);
  const ys = s.map((x) => x.rssKb / 1024);
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den ? num / den : NaN;
}

export function countFiles(dir: string): number {
  if (!existsSync(dir)) return 0;
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) n += e.isDirectory() ? countFiles(join(dir, e.name)) : 1;
  return n;
}

export function tmpEntries(): Set<string> {
  return new Set(readdirSync(tmpdir()));
}
