// Waits until the database answers, each try on a connection of its own: a worker started
// while Postgres is down waits here instead of dying at its first query.
// Why: the supervisor restarts a dying child with growing backoff (up to 10 s), so workers that
// died over and over during an outage came back seconds after Postgres did, and jobs queued
// before the outage waited for them (test/api/fault-postgres.test.ts).
import postgres from "postgres";
import { log } from "../log";

export async function waitForDatabase(url: string, pollMs = 500): Promise<void> {
  let loggedAt = 0;
  for (;;) {
    const probe = postgres(url, { max: 1, connect_timeout: 2, idle_timeout: 1, onnotice: () => {} });
    try {
      await probe`SELECT 1`;
      return;
    } catch (e) {
      if (Date.now() - loggedAt > 10_000) {
        log.warn("waiting for the database", { error: String(e) });
        loggedAt = Date.now();
      }
    } finally {
      await probe.end({ timeout: 1 }).catch(() => {});
    }
    await Bun.sleep(pollMs);
  }
}
