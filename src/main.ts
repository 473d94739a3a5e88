// Entry point and supervisor. `bun run start` runs the API and WORKERS worker processes;
// `--role api|worker` runs one role. Children that die are restarted with backoff; SIGTERM or
// SIGINT stops everything gracefully. When DATABASE_URL is unset the supervisor owns the
// embedded Postgres and hands its URL to the children.
import { parseArgs } from "node:util";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { config, stopConfig } from "./config";
import { connect, disconnect } from "./db/client";
import { migrate } from "./db/migrate";
import { resolveDatabaseUrl } from "./db/resolve";
import { createAccount, createKey } from "./admin/commands";
import { log } from "./log";

const { values } = parseArgs({ args: Bun.argv.slice(2), options: { role: { type: "string" } }, strict: true });
const role = values.role ?? "all";
if (!["all", "api", "worker"].includes(role)) {
  console.error(`--role must be api or worker (or omitted for both), got ${role}`);
  process.exit(2);
}

const database = await resolveDatabaseUrl({ startEmbedded: true });
const sql = connect(database.url, 2);
const applied = await migrate(sql);
if (applied.length) log.info("migrations applied", { applied });

// First start on an empty embedded database: a demo account and sandbox key, so the README's
// curl examples work at once. The key is printed here once and stored only as a hash.
if (database.embedded) {
  const [{ n }] = await sql<[{ n: number }]>`SELECT count(*)::int AS n FROM accounts`;
  if (n === 0) {
    const account = await createAccount(sql, "demo@example.com", "starter", true);
    const key = await createKey(sql, account.id, "test");
    console.log(
      `\nDemo account ${account.email} created. Sandbox API key (shown once):\n\n  ${key.key}\n\nOpen the console: ${config.baseUrl.replace(/\/api\/v1$/, "")}/console (sign in with this key)\nor try: curl -H "Authorization: Bearer ${key.key}" ${config.baseUrl}/account\n`,
    );
  }
}
await disconnect();

interface Child {
  name: string;
  script: string;
  /** Options for the bun runtime itself, before the script. */
  bunArgs?: string[];
  proc: Subprocess | null;
  restarts: number;
  startedAt: number;
}

const children: Child[] = [];
if (role === "all" || role === "api")
  children.push({
    name: "api",
    script: "roles/api.ts",
    // Bun answers a bare 431 (no envelope, no X-Request-Id) for request heads over its parser
    // limit, before the application sees them; raised far above the service's own 32 KiB limit
    // (src/http/app.ts), which answers with the envelope. Only heads over 1 MiB get Bun's answer.
    bunArgs: ["--max-http-header-size=1048576"],
    proc: null,
    restarts: 0,
    startedAt: 0,
  });
if (role === "all" || role === "worker") {
  for (let i = 0; i < Math.max(role === "worker" ? 1 : 0, config.workers); i++) {
    children.push({ name: `worker-${i + 1}`, script: "roles/worker.ts", proc: null, restarts: 0, startedAt: 0 });
  }
}

let stopping = false;

function spawnChild(c: Child) {
  c.startedAt = Date.now();
  c.proc = Bun.spawn(["bun", ...(c.bunArgs ?? []), join(import.meta.dir, c.script)], {
    env: { ...process.env, DATABASE_URL: database.url, WORKER_NAME: c.name, SUPERVISOR_PID: String(process.pid) },
    stdio: ["ignore", "inherit", "inherit"],
    onExit: (_p, code, signal) => {
      c.proc = null;
      if (stopping) return;
      // A child that ran for a while gets restarted at once; one that keeps dying, with backoff.
      if (Date.now() - c.startedAt > 30_000) c.restarts = 0;
      const delay = Math.min(10_000, 250 * 2 ** c.restarts);
      c.restarts++;
      log.warn("child exited; restarting", { child: c.name, code, signal, delay_ms: delay });
      setTimeout(() => !stopping && spawnChild(c), delay);
    },
  });
}

for (const c of children) spawnChild(c);
log.info("supervisor started", {
  role,
  children: children.map((c) => c.name),
  database: database.embedded ? "embedded" : "DATABASE_URL",
});

async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log.info("supervisor stopping", { signal });
  const running = children.filter((c) => c.proc);
  for (const c of running) c.proc!.kill("SIGTERM");
  const deadline = Date.now() + stopConfig.killAfterMs;
  while (children.some((c) => c.proc) && Date.now() < deadline) await Bun.sleep(50);
  for (const c of children) c.proc?.kill("SIGKILL");
  await database.stop();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
