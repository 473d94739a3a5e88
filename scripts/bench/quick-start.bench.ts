// The README's quick start on a fresh machine: the time from `git clone` to the API answering
// (`./scripts/start.sh`: Debian packages, Bun, npm packages, OCR models, the Rust build of the
// engine, the console) and to a first real OCR job finished over HTTP. Goal: under 8 minutes on
// 2 cores.
//
// The fresh machine is a container (podman, or docker) of Debian bookworm made from Debian
// packages (scripts/build-images.sh's base image) with what a new Debian development machine has
// and the README asks for: a Rust toolchain (this machine's, copied in), gcc, Python with pip,
// git, Node.js and npm (Debian's). Nothing of the project is installed or cached in it: no cargo
// registry, no target directory, no apt archive. It shares the host's network (the registries:
// Debian's mirror, npm, PyPI, crates.io) and its cores. The clone is of the commit under test
// (HEAD; uncommitted changes are not in it). scripts/bench/quick-start-drive.ts then makes an
// account and a key with the admin CLI, renders a page to JPEG through the API and OCRs it.
//
// Skipped, with the reason in the section, where no container can run.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import type { BenchContext, BenchSection } from "./run";

const GOAL_S = 8 * 60;

function run(cmd: string[], opts: { env?: Record<string, string>; timeoutMs?: number } = {}) {
  const r = spawnSync(cmd[0]!, cmd.slice(1), {
    encoding: "utf8",
    env: { ...process.env, ...opts.env },
    timeout: opts.timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: r.status ?? -1, out: r.stdout ?? "", err: r.stderr ?? "" };
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function skipped(why: string): BenchSection {
  return {
    title: "Quick start on a fresh machine",
    markdown: `Not measured: ${why}.`,
    json: { skipped: why },
  };
}

/** The shell run in the fresh container: prints `T <name> <seconds since the clone started>` lines. */
const inContainer = String.raw`
set -u
git config --global --add safe.directory '*'
t0=$(date +%s%N)
t() { echo "T $1 $(( ($(date +%s%N) - t0) / 1000000 ))"; }
git clone -q /src /root/docproc || exit 11
cd /root/docproc
t clone
./scripts/start.sh > /tmp/start.log 2>&1 &
pid=$!
until curl -sf "http://127.0.0.1:$PORT/healthz" > /dev/null; do
  kill -0 $pid 2>/dev/null || { echo "start.sh exited:"; tail -40 /tmp/start.log; exit 12; }
  sleep 1
done
t api
DOCPROC_URL="http://127.0.0.1:$PORT/api/v1" bun scripts/bench/quick-start-drive.ts > /tmp/drive.json 2> /tmp/drive.err \
  || { echo "the OCR job failed:"; cat /tmp/drive.err; tail -20 /tmp/start.log; exit 13; }
t ocr
echo "DRIVE $(cat /tmp/drive.json)"
grep -E '^setup: ' /tmp/start.log | sed 's/^/LOG /'
kill $pid
`;

export default async function quickStart(ctx: BenchContext): Promise<BenchSection> {
  // As scripts/test-containers.sh: podman, else a working docker, else podman installed by
  // scripts/build-images.sh when root on Debian.
  const has = (e: string) => run(["sh", "-c", `command -v ${e}`]).code === 0;
  const rootOnDebian = process.getuid?.() === 0 && has("apt-get");
  const engine = has("podman")
    ? "podman"
    : has("docker") && run(["docker", "info"]).code === 0
      ? "docker"
      : rootOnDebian
        ? "podman"
        : null;
  if (!engine) return skipped("neither podman nor a working docker, and not root on Debian to install podman");
  const base = run(["./scripts/build-images.sh"], { env: { BASE_ONLY: "1", ENGINE: engine }, timeoutMs: 1_800_000 });
  if (base.code !== 0) return skipped(`the base images could not be made: ${base.err.trim().split("\n").pop()}`);
  const rustVersion = run(["rustc", "--version"]).out.split(" ")[1];
  const fresh = `localhost/docproc-fresh-machine:${rustVersion}`;
  const dir = join(ctx.outDir, "quick-start");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "Containerfile"),
    [
      "FROM localhost/docproc-base:bookworm",
      "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\",
      "    gcc g++ make libc6-dev python3 python3-pip python3-venv git nodejs npm curl ca-certificates",
      `COPY --from=localhost/docproc-rust:${rustVersion} /usr/local/rust /usr/local/rust`,
      "ENV PATH=/usr/local/rust/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      "",
    ].join("\n"),
  );
  const built = run([engine, "build", "-q", "-t", fresh, dir], { timeoutMs: 1_800_000 });
  if (built.code !== 0)
    return skipped(`the fresh-machine image could not be built: ${built.err.trim().split("\n").pop()}`);

  const port = await freePort();
  const pgPort = await freePort();
  const started = Date.now();
  const r = run(
    [
      engine,
      "run",
      "--rm",
      "--network",
      "host",
      "-v",
      `${ctx.root}:/src:ro`,
      "-e",
      `PORT=${port}`,
      "-e",
      `EMBEDDED_PG_PORT=${pgPort}`,
      fresh,
      "bash",
      "-c",
      inContainer,
    ],
    { timeoutMs: 3_600_000 },
  );
  const wallS = (Date.now() - started) / 1000;
  const times: Record<string, number> = {};
  for (const m of r.out.matchAll(/^T (\w+) (\d+)$/gm)) times[m[1]!] = Number(m[2]) / 1000;
  const drive = r.out.match(/^DRIVE (.*)$/m)?.[1];
  const job = drive ? (JSON.parse(drive) as { text: string }) : null;
  const read = job?.text.includes("Quick start page 1") ?? false;
  const ok = r.code === 0 && times.ocr !== undefined && read;
  const rows = [
    "| step | seconds since `git clone` began |",
    "|---|---:|",
    `| clone | ${times.clone?.toFixed(1) ?? "-"} |`,
    `| API answers (\`./scripts/start.sh\`) | ${times.api?.toFixed(1) ?? "-"} |`,
    `| first OCR job finished (page rendered to JPEG by the API, then OCR'd) | ${times.ocr?.toFixed(1) ?? "-"} |`,
  ];
  const goal = ok
    ? `**${(times.ocr! / 60).toFixed(1)} min** from clone to a finished OCR job: goal (< ${GOAL_S / 60} min) ${times.ocr! < GOAL_S ? "met" : "**missed**"}.`
    : `**Failed** (exit ${r.code}${job ? `, OCR read ${JSON.stringify(job.text)}` : ""}):\n\n\`\`\`\n${r.out.slice(-3000)}\n${r.err.slice(-2000)}\n\`\`\``;
  const markdown = [
    "A fresh Debian bookworm container (made from Debian packages; a Rust toolchain, gcc, Python with pip, git, Node.js and npm; no project cache) runs the README's quick start on a clone of the commit under test, sharing this machine's cores and network; then a first OCR job through the API. Time includes every download (Debian's mirror, npm, PyPI, crates.io) at this machine's network speed.",
    "",
    ...rows,
    "",
    goal,
    "",
    `Container run: ${wallS.toFixed(0)} s wall (${engine}).`,
  ].join("\n");
  return {
    title: "Quick start on a fresh machine",
    markdown,
    json: { engine, ok, times, goal_s: GOAL_S, wall_s: wallS, ocr_text: job?.text ?? null, exit: r.code },
  };
}
