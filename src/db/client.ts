// The Postgres client. One pool per process; `sql` is the only way code talks to the database.
import postgres from "postgres";

// biome-ignore lint/complexity/noBannedTypes: postgres's own "no custom types" parameter is `{}`
type NoCustomTypes = {};
export type Sql = postgres.Sql<NoCustomTypes>;
/** The pool or a transaction (`db().begin(tx => ...)`): what a query function needs. */
export type Queryable = postgres.ISql<NoCustomTypes>;

let pool: Sql | null = null;

export function connect(url: string, max = 10): Sql {
  if (pool) return pool;
  pool = postgres(url, {
    max,
    idle_timeout: 30,
    connect_timeout: 10,
    onnotice: () => {},
    // Postgres numerics come back as strings by default; we convert where needed.
    types: { bigint: postgres.BigInt },
  });
  return pool;
}

/** Connection-level failures of the database (down, restarting, out of connections): nothing
 * is known about the statement that met one, so callers leave the outcome to leases and retries. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = (error as { code?: string })?.code;
  return [
    "ECONNREFUSED",
    "ECONNRESET",
    "CONNECTION_CLOSED",
    "CONNECTION_ENDED",
    "CONNECTION_DESTROYED",
    "CONNECT_TIMEOUT",
    "57P01",
    "57P03",
    "53300",
  ].includes(code ?? "");
}

export function db(): Sql {
  if (!pool) throw new Error("database not connected");
  return pool;
}

export async function disconnect(): Promise<void> {
  if (pool) await pool.end({ timeout: 5 });
  pool = null;
}
