// Decides which Postgres a process talks to: DATABASE_URL when set; otherwise the embedded
// cluster under DATA_DIR — reused when a running service already started it, else started here.
import { config } from "../config";
import { embeddedCredentials, embeddedUrl, startEmbeddedPostgres } from "./embedded";
import { probeDatabase } from "./wait";

export interface ResolvedDatabase {
  url: string;
  embedded: boolean;
  /** True when this call created a brand-new embedded cluster. */
  created: boolean;
  /** Stops the embedded cluster if this call started it; otherwise does nothing. */
  stop(): Promise<void>;
}

export async function resolveDatabaseUrl(opts: { startEmbedded: boolean }): Promise<ResolvedDatabase> {
  if (config.databaseUrl) return { url: config.databaseUrl, embedded: false, created: false, stop: async () => {} };
  const creds = embeddedCredentials(config.dataDir);
  if (creds && (await probeDatabase(embeddedUrl(creds))) === null) {
    return { url: embeddedUrl(creds), embedded: true, created: false, stop: async () => {} };
  }
  if (!opts.startEmbedded) throw new Error("DATABASE_URL is unset and no embedded Postgres is running");
  const e = await startEmbeddedPostgres(config.dataDir, config.embeddedPgPort);
  return { url: e.url, embedded: true, created: e.created, stop: e.stop };
}
