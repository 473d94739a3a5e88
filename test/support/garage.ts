// A throw-away single-node Garage (S3-compatible object store) for tests: loopback ports, sqlite
// metadata in a temp dir, one key and one bucket; stopped and removed at the end. Its server can
// be stopped and started again on the same directory and ports (an outage: objects survive).
import { mkdtempSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { Subprocess } from "bun";
import type postgres from "postgres";
import { freePort } from "./service";

/** scripts/setup-test.sh installs Garage here (GARAGE_BIN overrides). */
export const garageBin =
  process.env.GARAGE_BIN || `${process.env.GARAGE_ROOT || "/var/cache/docproc/garage"}/bin/garage`;
export const garageAvailable = existsSync(garageBin);

export interface Garage {
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** A client of the bucket, for tests that look at what the service stored. */
  s3: Bun.S3Client;
  /** The S3_* environment a service needs to use this store. */
  env: Record<string, string>;
  /** Stops the server, keeping its data and configuration (the store is unreachable until startServer). */
  stopServer(): Promise<void>;
  /** Starts the stopped server again on the same data and ports; resolves once the bucket answers. */
  startServer(): Promise<void>;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

/** Three distinct free loopback ports (two free ports asked in a row can be the same one). */
async function threePorts(): Promise<[number, number, number]> {
  const ports = new Set<number>();
  while (ports.size < 3) ports.add(await freePort());
  return [...ports] as [number, number, number];
}

export async function startGarage(): Promise<Garage> {
  const dir = mkdtempSync(join(tmpdir(), "garage-"));
  const [s3Port, rpcPort, adminPort] = await threePorts();
  const cfg = join(dir, "garage.toml");
  const region = "garage";
  writeFileSync(
    cfg,
    `metadata_dir = "${dir}/meta"
data_dir = "${dir}/data"
db_engine = "sqlite"
replication_factor = 1
rpc_bind_addr = "127.0.0.1:${rpcPort}"
rpc_public_addr = "127.0.0.1:${rpcPort}"
rpc_secret = "${randomBytes(32).toString("hex")}"

[s3_api]
s3_region = "${region}"
api_bind_addr = "127.0.0.1:${s3Port}"
root_domain = ".s3.garage.localhost"

[admin]
api_bind_addr = "127.0.0.1:${adminPort}"
`,
  );
  // Its stderr is drained all along (a full pipe would block the server); the last 4 kB explain a failed start.
  let serverLog = "";
  const spawnServer = (): Subprocess => {
    const p = Bun.spawn([garageBin, "-c", cfg, "server"], {
      stdout: "ignore",
      stderr: "pipe",
      env: { ...process.env, RUST_LOG: "warn" },
    });
    void (async () => {
      const dec = new TextDecoder();
      for await (const chunk of p.stderr as ReadableStream<Uint8Array>)
        serverLog = (serverLog + dec.decode(chunk)).slice(-4096);
    })();
    return p;
  };
  let server = spawnServer();
  const stopServer = async () => {
    server.kill("SIGTERM");
    await Promise.race([server.exited, Bun.sleep(5000)]);
    server.kill("SIGKILL");
    await server.exited;
  };
  const cli = async (...args: string[]): Promise<string> => {
    const p = Bun.spawn([garageBin, "-c", cfg, ...args], { stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = [await new Response(p.stdout).text(), await new Response(p.stderr).text(), await p.exited];
    if (code !== 0) throw new Error(`garage ${args.join(" ")} failed (${code}): ${err || out}`);
    return out;
  };
  /** Runs a read-only or idempotent command until it succeeds (about 30 s at most). */
  const untilOk = async (...args: string[]): Promise<string> => {
    for (let i = 0; ; i++) {
      if (server.exitCode !== null) throw new Error(`garage server exited (${server.exitCode}): ${serverLog}`);
      try {
        return await cli(...args);
      } catch (e) {
        if (i >= 150) throw new Error(`${String(e)}\ngarage server log: ${serverLog}`);
        await Bun.sleep(200);
      }
    }
  };
  try {
    // `node id` reads the key file the server writes at start, without asking the server;
    // `status` answers only once its RPC listener is up. Commands sent before that fail with
    // a refused connection (it failed CI once on a cold machine), so both are waited for.
    const nodeId = (await untilOk("node", "id", "-q")).trim().split("@")[0]!;
    await untilOk("status");
    await untilOk("layout", "assign", "-z", "dc1", "-c", "1G", nodeId);
    await cli("layout", "apply", "--version", "1");
    // Right after the layout is applied, the tables can still refuse writes (no quorum yet):
    // these are retried too (a second key or an existing bucket is harmless).
    const keyOut = await untilOk("key", "create", "docproc-test");
    const accessKeyId = /Key ID:\s*(\S+)/i.exec(keyOut)?.[1];
    const secretAccessKey = /Secret key:\s*(\S+)/i.exec(keyOut)?.[1];
    if (!accessKeyId || !secretAccessKey) throw new Error(`cannot read the key from: ${keyOut}`);
    const bucket = "docproc-test";
    await untilOk("bucket", "create", bucket).catch(async (e) => {
      if (
        !(await cli("bucket", "info", bucket).then(
          () => true,
          () => false,
        ))
      )
        throw e;
    });
    await untilOk("bucket", "allow", "--read", "--write", "--owner", bucket, "--key", accessKeyId);
    const endpoint = `http://127.0.0.1:${s3Port}`;
    // The layout takes a moment to apply (and a restarted server to come up): wait until the bucket answers.
    const probe = new Bun.S3Client({ endpoint, bucket, accessKeyId, secretAccessKey, region });
    const bucketAnswers = async () => {
      for (let i = 0; ; i++) {
        try {
          await probe.list({ maxKeys: 1 });
          return;
        } catch (e) {
          if (i > 100) throw new Error(`${String(e)}\ngarage server log: ${serverLog}`);
          if (server.exitCode !== null) throw new Error(`garage server exited (${server.exitCode}): ${serverLog}`);
          await Bun.sleep(200);
        }
      }
    };
    await bucketAnswers();
    return {
      endpoint,
      bucket,
      accessKeyId,
      secretAccessKey,
      region,
      s3: probe,
      env: {
        S3_ENDPOINT: endpoint,
        S3_BUCKET: bucket,
        S3_ACCESS_KEY_ID: accessKeyId,
        S3_SECRET_ACCESS_KEY: secretAccessKey,
        S3_REGION: region,
      },
      stopServer,
      async startServer() {
        if (server.exitCode === null && server.signalCode === null) throw new Error("the garage server is running");
        server = spawnServer();
        await bucketAnswers();
      },
      async stop() {
        await stopServer();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    server.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

/** Keys of the bucket that belong neither to a ready file nor to a succeeded job's result:
 * what a run left behind (partial results, half-written uploads). */
export async function unownedObjects(garage: Garage, sql: postgres.Sql): Promise<string[]> {
  const objects: string[] = [];
  let token: string | undefined;
  do {
    const page = await garage.s3.list({ continuationToken: token });
    for (const o of page.contents ?? []) objects.push(o.key);
    token = page.isTruncated ? page.nextContinuationToken : undefined;
  } while (token);
  const files = await sql`SELECT storage_key FROM files WHERE status = 'ready'`;
  const results =
    await sql`SELECT result->>'storage_key' AS k FROM jobs WHERE status = 'succeeded' AND result->>'storage_key' IS NOT NULL`;
  const owned = new Set([...files.map((f) => f.storage_key as string), ...results.map((r) => r.k as string)]);
  return objects.filter((o) => !owned.has(o));
}
