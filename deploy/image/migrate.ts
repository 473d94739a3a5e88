// `docproc migrate`: waits for the database at DATABASE_URL, applies the pending migrations
// (src/db/migrate.ts, forward-only) and exits. Every node also runs them at start-up (safe from
// several at once); compose and Kubernetes run this once first so that nodes start on a
// migrated schema.
import { config } from "../../src/config";
import { connect, disconnect } from "../../src/db/client";
import { migrate } from "../../src/db/migrate";
import { waitForDatabase } from "../../src/db/wait";

if (!config.databaseUrl) {
  console.error("migrate: DATABASE_URL is required");
  process.exit(2);
}
await waitForDatabase(config.databaseUrl);
const sql = connect(config.databaseUrl, 1);
const applied = await migrate(sql);
await disconnect();
console.log(JSON.stringify({ migrations_applied: applied }));
