// The API role: HTTP only. It never loads the native engine, so a hostile document can
// crash a worker but never the API.
import { config } from "../config";
import { connect, disconnect } from "../db/client";
import { buildApp } from "../http/app";
import { allRoutes } from "../http/routes";
import { consoleRoutes } from "../http/console";
import { log } from "../log";
import { stopWhenOrphaned } from "./orphan-guard";

if (!config.databaseUrl) throw new Error("DATABASE_URL is required by the api role (the supervisor provides it)");
connect(config.databaseUrl, 20);
const app = buildApp(allRoutes, consoleRoutes);
// No server-wide body cap: Bun would answer a bare 413 without the error envelope. Uploads are
// limited to MAX_UPLOAD_BYTES while they stream (413 file_too_large) and JSON bodies to 1 MB.
app.listen({ hostname: config.host, port: config.port, maxRequestBodySize: Number.MAX_SAFE_INTEGER });
log.info("api listening", { url: `http://${config.host}:${config.port}` });

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log.info("api stopping", { signal });
  await app.stop();
  await disconnect();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
stopWhenOrphaned((reason) => void shutdown(reason));
process.on("SIGINT", () => void shutdown("SIGINT"));
