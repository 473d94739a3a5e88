// The process model (issue 2, points 3-5): the supervisor restarts a child that dies, SIGTERM
// and SIGINT stop the whole service gracefully with exit code 0, and the first start on the
// embedded Postgres creates a demo account and prints one working sandbox key, once.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { client, freePort, root, startService, type Service } from "../support/service";
import { childrenOf, isAlive, spawnBun, waitFor, waitHealthy } from "../support/wait";

setDefaultTimeout(90_000);

async function roleChildren(pid: number) {
  const kids = await childrenOf(pid);
  return {
    api: kids.filter((k) => k.cmd.includes("roles/api.ts")),
    workers: kids.filter((k) => k.cmd.includes("roles/worker.ts")),
    all: kids,
  };
}

async function exitsWithin(proc: { exited: Promise<number> }, ms: number): Promise<number | "timeout"> {
  return Promise.race([proc.exited, Bun.sleep(ms).then(() => "timeout" as const)]);
}

describe("supervision", () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({ workers: 2 });
  });
  afterAll(async () => {
    await svc?.stop();
  });

  test("bun run start supervises one API process and WORKERS worker processes", async () => {
    const { api, workers } = await waitFor("the children to start", async () => {
      const c = await roleChildren(svc.proc.pid);
      return c.api.length === 1 && c.workers.length === 2 ? c : undefined;
    });
    expect(api.length).toBe(1);
    expect(workers.length).toBe(2);
  });

  test("the supervisor restarts an API child killed with SIGKILL", async () => {
    const { key } = await svc.newKey();
    const [api] = (await roleChildren(svc.proc.pid)).api;
    expect(api).toBeDefined();
    process.kill(api!.pid, "SIGKILL");
    await waitFor("the old API process to die", () => !isAlive(api!.pid));
    const next = await waitFor("a new API child", async () => {
      const c = (await roleChildren(svc.proc.pid)).api;
      return c.length === 1 && c[0]!.pid !== api!.pid ? c[0] : undefined;
    });
    expect(next!.pid).not.toBe(api!.pid);
    await waitFor(
      "the API to answer again",
      async () => (await fetch(`${svc.origin}/healthz`).catch(() => null))?.status === 200,
    );
    const r = await client(svc.baseUrl, key)("GET", "/account");
    expect(r.status).toBe(200);
    expect(svc.proc.exitCode).toBeNull();
  });

  test("the supervisor restarts a worker child killed with SIGKILL", async () => {
    const before = (await roleChildren(svc.proc.pid)).workers;
    expect(before.length).toBe(2);
    const victim = before[0]!;
    process.kill(victim.pid, "SIGKILL");
    const after = await waitFor("a replacement worker", async () => {
      const w = (await roleChildren(svc.proc.pid)).workers;
      return w.length === 2 && !w.some((x) => x.pid === victim.pid) ? w : undefined;
    });
    expect(after.map((w) => w.pid)).toContain(before[1]!.pid);
    expect(svc.proc.exitCode).toBeNull();
  });

  test("a child that keeps dying is restarted again (with backoff), not given up on", async () => {
    for (let i = 0; i < 2; i++) {
      const [api] = (await roleChildren(svc.proc.pid)).api;
      process.kill(api!.pid, "SIGKILL");
      await waitFor(
        "a new API child",
        async () => {
          const c = (await roleChildren(svc.proc.pid)).api;
          return c.length === 1 && c[0]!.pid !== api!.pid;
        },
        20_000,
      );
    }
    await waitFor(
      "the API to answer again",
      async () => (await fetch(`${svc.origin}/healthz`).catch(() => null))?.status === 200,
      20_000,
    );
  });
});

describe("graceful shutdown", () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    test(`${signal} stops the whole service within a few seconds with exit code 0`, async () => {
      const svc = await startService({ workers: 1 });
      try {
        const kids = await waitFor("the children to start", async () => {
          const c = await roleChildren(svc.proc.pid);
          return c.api.length === 1 && c.workers.length === 1 ? c.all : undefined;
        });
        const t0 = performance.now();
        svc.proc.kill(signal);
        const code = await exitsWithin(svc.proc, 10_000);
        const took = performance.now() - t0;
        expect({ signal, code }).toEqual({ signal, code: 0 });
        expect(took).toBeLessThan(5_000);
        for (const k of kids) await waitFor(`child ${k.pid} to be gone`, () => !isAlive(k.pid), 5_000);
        expect((await fetch(`${svc.origin}/healthz`).catch(() => null))?.status).toBeUndefined();
      } finally {
        await svc.stop();
      }
    });
  }

  test("when the supervisor is killed with SIGKILL, its API and worker children stop instead of running on as orphans", async () => {
    const svc = await startService({ workers: 1 });
    try {
      const kids = await waitFor("the children to start", async () => {
        const c = await roleChildren(svc.proc.pid);
        return c.api.length === 1 && c.workers.length === 1 ? c.all : undefined;
      });
      svc.proc.kill("SIGKILL");
      for (const k of kids) await waitFor(`orphaned child ${k.pid} to stop`, () => !isAlive(k.pid), 10_000);
    } finally {
      await svc.stop();
    }
  });

  test("a single role (--role api) also stops on SIGTERM with exit code 0", async () => {
    const svc = await startService({ args: ["--role", "api"] });
    try {
      const c = await roleChildren(svc.proc.pid);
      expect(c.api.length).toBe(1);
      expect(c.workers.length).toBe(0);
      svc.proc.kill("SIGTERM");
      expect(await exitsWithin(svc.proc, 10_000)).toBe(0);
    } finally {
      await svc.stop();
    }
  });
});

describe("embedded Postgres", () => {
  // Postgres refuses to run as root, so the service runs it as an unprivileged user, which
  // must be able to enter DATA_DIR: mkdtemp makes a 0700 directory, so open it up like ./.data.
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), "docproc-embedded-"));
    chmodSync(dataDir, 0o755);
  });
  afterAll(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function start() {
    const port = await freePort();
    const pgPort = await freePort();
    const p = spawnBun("src/main.ts", [], {
      DATABASE_URL: undefined,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: "127.0.0.1",
      EMBEDDED_PG_PORT: String(pgPort),
      WORKERS: "1",
    });
    await waitHealthy(`http://127.0.0.1:${port}`, p, 200, 90_000);
    return { p, origin: `http://127.0.0.1:${port}` };
  }

  async function postgresGone() {
    await waitFor(
      "the embedded Postgres to stop",
      async () => {
        const pg = Bun.spawn(["pgrep", "-f", join(dataDir, "postgres")], { stdout: "pipe" });
        const out = await new Response(pg.stdout).text();
        await pg.exited;
        return out.trim() === "";
      },
      15_000,
    );
  }

  test("first start prints a demo sandbox key that works; a second start prints none and keeps the data", async () => {
    // First start: a new cluster, a demo account, one sandbox key printed.
    const first = await start();
    const keys = await waitFor(
      "the demo key to be printed",
      () => first.p.output().match(/svk_test_[0-9A-Za-z]{40}/g) ?? undefined,
      10_000,
    );
    expect(new Set(keys).size).toBe(1);
    const key = keys[0]!;
    const r = await client(`${first.origin}/api/v1`, key)("GET", "/account");
    expect(r.status).toBe(200);
    expect(r.json.email).toBe("demo@example.com");
    expect(r.json.key.mode).toBe("test");
    // The admin CLI finds the running embedded database without DATABASE_URL.
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "DATABASE_URL") env[k] = v;
    const cli = Bun.spawn(["bun", "run", "admin", "account:create", "--email", "second@example.com"], {
      cwd: root,
      env: { ...env, DATA_DIR: dataDir },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, , cliCode] = await Promise.all([
      new Response(cli.stdout).text(),
      new Response(cli.stderr).text(),
      cli.exited,
    ]);
    expect(cliCode).toBe(0);
    expect(JSON.parse(out).email).toBe("second@example.com");
    expect(await first.p.stop()).toBe(0);
    await postgresGone();

    // Second start on the same DATA_DIR: no new key, the old key and the data are still there.
    const second = await start();
    try {
      expect(second.p.output()).not.toMatch(/svk_(test|live)_/);
      const again = await client(`${second.origin}/api/v1`, key)("GET", "/account");
      expect(again.status).toBe(200);
      expect(again.json.id).toBe(r.json.id);
    } finally {
      expect(await second.p.stop()).toBe(0);
    }
    await postgresGone();
  });
});
