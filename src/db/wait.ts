// Whether the database answers (one probe connection of its own), and waiting until it does: a
// worker started while Postgres is down waits here instead of dying at its first query.
// Why: the supervisor restarts a dying child with growing backoff (up to 10 s), so workers that
// died over and over during an outage came back seconds after Postgres did, and jobs queued
// before the outage waited for them (test/api/fault-postgres.test.ts).
import postgres from "postgres";
import { log } from "../log";

/** Runs `SELECT 1` on a connection of its own: null when it answered, else the error. */
export async function probeDatabase(url: string): Promise<unknown> {
  const sql = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    await sql`SELECT 1`;
    return null;
  } catch (e) {
    return e;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

export async function waitForDatabase(url: string, pollMs = 500): Promise<void> {
  let loggedAt = 0;
  for (let error = await probeDatabase(url); error !== null; error = await probeDatabase(url)) {
    if (Date.now() - loggedAt > 10_000) {
      log.warn("waiting for the database", { error: String(error) });
      loggedAt = Date.now();
    }
    await Bun.sleep(pollMs);
  }
}
