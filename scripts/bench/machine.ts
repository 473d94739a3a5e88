// What a figure ran on: the CPU by name and by the instructions that decide the OCR's speed
// (AVX2 is the common path; AVX-512 BF16 and AMX let OpenVINO run the recogniser in bfloat16),
// the cores, the memory, and the code (commit, uncommitted changes).
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";

/** The instruction-set flags reported, in this order, when the CPU has them. */
export const REPORTED_FLAGS = [
  "avx2",
  "fma",
  "avx512f",
  "avx512_vnni",
  "avx_vnni",
  "avx512_bf16",
  "amx_tile",
  "amx_bf16",
  "amx_int8",
] as const;

export interface Machine {
  cpu: string;
  cores: number;
  flags: string[];
  /** Whether OpenVINO can run the recogniser in bfloat16 here (AVX512_BF16 or AMX). */
  bf16: boolean;
  memory_gib: number;
  kernel: string;
}

export interface CodeVersion {
  commit: string;
  /** Uncommitted changes to tracked files when the run started. */
  dirty: boolean;
}

export function machine(): Machine {
  let cpuinfo = "";
  try {
    cpuinfo = readFileSync("/proc/cpuinfo", "utf8");
  } catch {
    // Not Linux: the flags stay unknown (empty), the model comes from os.cpus().
  }
  const have = new Set((/^flags\s*:(.*)$/m.exec(cpuinfo)?.[1] ?? "").trim().split(/\s+/));
  const flags = REPORTED_FLAGS.filter((f) => have.has(f));
  return {
    cpu: /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1]?.trim() ?? cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    flags,
    bf16: have.has("avx512_bf16") || have.has("amx_bf16"),
    memory_gib: Math.round(totalmem() / 2 ** 30),
    kernel: spawnSync("uname", ["-r"], { encoding: "utf8" }).stdout?.trim() ?? "",
  };
}

export function codeVersion(root: string): CodeVersion {
  const git = (args: string[]) => spawnSync("git", ["-C", root, ...args], { encoding: "utf8" });
  const commit = git(["rev-parse", "--short=12", "HEAD"]).stdout?.trim() || "unknown";
  const dirty = (git(["status", "--porcelain", "--untracked-files=no"]).stdout ?? "").trim().length > 0;
  return { commit, dirty };
}

/** "AMD EPYC, 2 cores, avx2 fma (no bfloat16)": the label every figure carries. */
export function machineLabel(m: Machine): string {
  const bf = m.bf16 ? "bfloat16" : "no bfloat16";
  return `${m.cpu}, ${m.cores} cores, ${m.flags.join(" ") || "flags unknown"} (${bf}), ${m.memory_gib} GiB`;
}
