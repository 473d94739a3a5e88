// The command line of the per-page latency harness (latency.ts): its options, their defaults, the
// usage text, and the progress lines that --quiet silences.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { defaultMix, parseMix, parseRates, type MixEntry } from "./latency-lib";

export interface LatencyOptions {
  url: string;
  keys: string[];
  rates: number[];
  /** True when the rates came from --sweep (the knee is reported). */
  sweep: boolean;
  durationS: number;
  drainS: number;
  mix: MixEntry[];
  mixSpec: string;
  seed: number;
  pollMs: number;
  poll: "list" | "job";
  maxOutstanding: number;
  timeoutMs: number;
  ocrDpi: number;
  out?: string;
  quiet: boolean;
}

export const defaults = {
  url: "http://127.0.0.1:8080/api/v1",
  durationS: 60,
  drainS: 120,
  seed: 1,
  pollMs: 100,
  maxOutstanding: 500,
  timeoutMs: 30_000,
  ocrDpi: 300,
};

export const usage = `usage: bun run bench latency --key KEY[,KEY...] (--rate JOBS_PER_S | --sweep R1,R2,...)
  [--url ${defaults.url}] [--duration ${defaults.durationS}] [--drain ${defaults.drainS}]
  [--mix ${defaultMix}]
  [--seed ${defaults.seed}] [--poll-ms ${defaults.pollMs}] [--poll list|job] [--max-outstanding ${defaults.maxOutstanding}]
  [--timeout-ms ${defaults.timeoutMs}] [--ocr-dpi ${defaults.ocrDpi}] [--keys-file FILE] [--out FILE] [--quiet]
keys: --key (repeatable, comma-separated), --keys-file (one per line) or DOCPROC_KEY; all of one account and mode.`;

function num(v: string | undefined, name: string, d: number, min = 0): number {
  if (v === undefined) return d;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number >= ${min}, got "${v}"`);
  return n;
}

/** Command line → options; throws with a message on a usage error. */
export function parseOptions(argv: string[], env: Record<string, string | undefined> = process.env): LatencyOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      url: { type: "string" },
      key: { type: "string", multiple: true },
      "keys-file": { type: "string" },
      rate: { type: "string" },
      sweep: { type: "string" },
      duration: { type: "string" },
      drain: { type: "string" },
      mix: { type: "string" },
      seed: { type: "string" },
      "poll-ms": { type: "string" },
      poll: { type: "string" },
      "max-outstanding": { type: "string" },
      "timeout-ms": { type: "string" },
      "ocr-dpi": { type: "string" },
      out: { type: "string" },
      quiet: { type: "boolean" },
      help: { type: "boolean" },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) throw new Error(usage);
  const split = (s: string) =>
    s
      .split(/[\s,]+/)
      .map((k) => k.trim())
      .filter(Boolean);
  let keys = (values.key ?? []).flatMap(split);
  if (values["keys-file"]) keys.push(...split(readFileSync(values["keys-file"], "utf8")));
  if (!keys.length && env.DOCPROC_KEY) keys = split(env.DOCPROC_KEY);
  if (!keys.length) throw new Error(`--key is required (or DOCPROC_KEY)\n${usage}`);
  keys = [...new Set(keys)];
  if (values.rate && values.sweep) throw new Error("give --rate or --sweep, not both");
  if (!values.rate && !values.sweep) throw new Error(`--rate or --sweep is required\n${usage}`);
  const rates = parseRates(values.sweep ?? values.rate!);
  const url = (values.url ?? env.DOCPROC_URL ?? defaults.url).replace(/\/+$/, "");
  if (!/^https?:\/\/[^/]+/.test(url)) throw new Error(`--url must be an http(s) URL, got "${url}"`);
  const poll = values.poll ?? "list";
  if (poll !== "list" && poll !== "job") throw new Error('--poll must be "list" or "job"');
  const mixSpec = values.mix ?? defaultMix;
  const durationS = num(values.duration, "duration", defaults.durationS, 0.001);
  return {
    url,
    keys,
    rates,
    sweep: !!values.sweep,
    durationS,
    drainS: num(values.drain, "drain", defaults.drainS),
    mix: parseMix(mixSpec),
    mixSpec,
    seed: Math.trunc(num(values.seed, "seed", defaults.seed)),
    pollMs: num(values["poll-ms"], "poll-ms", defaults.pollMs, 1),
    poll,
    maxOutstanding: Math.trunc(num(values["max-outstanding"], "max-outstanding", defaults.maxOutstanding, 1)),
    timeoutMs: num(values["timeout-ms"], "timeout-ms", defaults.timeoutMs, 1),
    ocrDpi: num(values["ocr-dpi"], "ocr-dpi", defaults.ocrDpi, 50),
    out: values.out,
    quiet: !!values.quiet,
  };
}

/** A line on stderr, unless --quiet. */
export function log(opts: { quiet: boolean }, msg: string): void {
  if (!opts.quiet) console.error(`latency: ${msg}`);
}
