// The API role: HTTP only. It never loads the native engine, so a hostile document can
// crash a worker but never the API.
import { config } from "../config";
import { connect, disconnect } from "../db/client";
import { buildApp } from "../http/app";
import { allRoutes } from "../http/routes";
import { log } from "../log";

if (!config.databaseUrl) throw new Error("DATABASE_URL is required by the api role (the supervisor provides it)");
connect(config.databaseUrl, 20);
const app = buildApp(allRoutes);
app.listen({ hostname: config.host, port: config.port, maxRequestBodySize: config.maxUploadBytes + 1024 * 1024 });
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
process.on("SIGINT", () => void shutdown("SIGINT"));
