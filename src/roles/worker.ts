// The worker role: the only kind of process that loads the native engine. It claims jobs from
// Postgres and runs them; see src/worker/ for the loop.
import { config } from "../config";
import { connect, disconnect } from "../db/client";
import { waitForDatabase } from "../db/wait";
import { log } from "../log";
import { stopWhenOrphaned } from "./orphan-guard";
import { startWorkerLoop } from "../worker/loop";
import { startWebhookDispatcher } from "../delivery/dispatcher";
import { stopLibreOffice } from "../convert/libreoffice";

if (!config.databaseUrl) throw new Error("DATABASE_URL is required by the worker role (the supervisor provides it)");
// A worker whose database connection breaks exits, and the supervisor starts a fresh one, which
// waits for the database (waitForDatabase): postgres.js re-subscribes the LISTEN channels after a
// lost connection and leaves that attempt's failure unhandled (porsager/postgres#641), and a
// worker kept alive past it never ran a query again after Postgres came back (measured: its
// reaper and claims stayed silent, its jobs counted against the key's concurrency limit).
process.on("unhandledRejection", (e) => {
  log.error("worker exiting after an unhandled rejection; the supervisor starts a fresh one", { error: String(e) });
  process.exit(1);
});
await waitForDatabase(config.databaseUrl);
const sql = connect(config.databaseUrl, 4);
const loop = await startWorkerLoop(sql);
const dispatcher = await startWebhookDispatcher(sql);
log.info("worker started");

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log.info("worker stopping", { signal });
  await loop.stop();
  stopLibreOffice();
  await dispatcher.stop();
  await disconnect();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
stopWhenOrphaned((reason) => void shutdown(reason));
process.on("SIGINT", () => void shutdown("SIGINT"));
