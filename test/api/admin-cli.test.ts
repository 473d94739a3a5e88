// docs/operating.md, Admin CLI (issue 2, point 4): every command prints exactly one JSON object with
// the documented fields on stdout and exits 0; errors exit non-zero with a message on stderr
// and nothing on stdout. Commands run as the contract writes them: `bun run admin ...`.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { client, root } from "../support/service";
import { useService } from "../support/use-service";

setDefaultTimeout(60_000);

const svc = useService();

const allScopes = ["documents:read", "documents:write", "jobs:read", "jobs:write", "usage:read", "webhooks:manage"];
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function admin(...args: string[]) {
  const p = Bun.spawn(["bun", "run", "admin", ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: svc.databaseUrl, LOG_LEVEL: "warn" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { stdout, stderr, code };
}

/** Runs a command that must succeed: one line, one JSON object, exit 0. */
async function ok(...args: string[]): Promise<any> {
  const r = await admin(...args);
  if (r.code !== 0) throw new Error(`admin ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  const lines = r.stdout.split("\n").filter((l) => l.trim());
  expect(lines.length).toBe(1);
  const out = JSON.parse(lines[0]!);
  expect(typeof out).toBe("object");
  expect(Array.isArray(out)).toBe(false);
  expect(out).not.toBeNull();
  return out;
}

const email = (tag: string) => `${tag}-${Date.now()}-${Math.random().toString(36).slice(2, 7)}@example.com`;

describe("commands", () => {
  test("account:create prints {id, email, plan, email_verified}: starter and verified by default", async () => {
    const e = email("cli");
    const out = await ok("account:create", "--email", e);
    expect(Object.keys(out).sort()).toEqual(["email", "email_verified", "id", "plan"]);
    expect(out).toEqual({ id: expect.stringMatching(uuid), email: e, plan: "starter", email_verified: true });
  });

  test("account:create --plan free --unverified", async () => {
    const e = email("cli-free");
    expect(await ok("account:create", "--email", e, "--plan", "free", "--unverified")).toEqual({
      id: expect.stringMatching(uuid),
      email: e,
      plan: "free",
      email_verified: false,
    });
  });

  test("account:set prints the account JSON with the changes applied", async () => {
    const a = await ok("account:create", "--email", email("cli-set"), "--plan", "free", "--unverified");
    const out = await ok(
      "account:set",
      "--account",
      a.id,
      "--plan",
      "starter",
      "--email-verified",
      "true",
      "--spending-cap-eur",
      "50",
    );
    expect(out).toMatchObject({ id: a.id, email: a.email, plan: "starter", email_verified: true });
    expect(Number(out.spending_cap_eur)).toBe(50);
    // Flags not given leave their fields alone.
    expect(await ok("account:set", "--account", a.id, "--email-verified", "false")).toMatchObject({
      plan: "starter",
      email_verified: false,
    });
  });

  test("key:create prints {id, key, mode, scopes} with all six scopes by default, and the key works", async () => {
    const a = await ok("account:create", "--email", email("cli-key"));
    const out = await ok("key:create", "--account", a.id, "--mode", "test");
    expect(Object.keys(out).sort()).toEqual(["id", "key", "mode", "scopes"]);
    expect(out).toEqual({
      id: expect.stringMatching(uuid),
      key: expect.stringMatching(/^svk_test_[0-9A-Za-z]{40}$/),
      mode: "test",
      scopes: allScopes,
    });
    const r = await client(svc.baseUrl, out.key)("GET", "/account");
    expect(r.status).toBe(200);
    expect(r.json.id).toBe(a.id);
    expect(r.json.key.id).toBe(out.id);
  });

  test("key:create --mode live --scopes ... --expires-in ...", async () => {
    const a = await ok("account:create", "--email", email("cli-live"));
    const out = await ok(
      "key:create",
      "--account",
      a.id,
      "--mode",
      "live",
      "--scopes",
      "jobs:read,usage:read",
      "--expires-in",
      "3600",
    );
    expect(out).toEqual({
      id: expect.stringMatching(uuid),
      key: expect.stringMatching(/^svk_live_[0-9A-Za-z]{40}$/),
      mode: "live",
      scopes: ["jobs:read", "usage:read"],
    });
    const r = await client(svc.baseUrl, out.key)("GET", "/account");
    expect(r.json.key).toMatchObject({ mode: "live", scopes: ["jobs:read", "usage:read"] });
    expect(Date.parse(r.json.key.expires_at) - Date.now()).toBeGreaterThan(3500_000);
  });

  test("key:revoke prints {id, revoked: true} and the key stops working", async () => {
    const a = await ok("account:create", "--email", email("cli-revoke"));
    const k = await ok("key:create", "--account", a.id, "--mode", "test");
    expect(await ok("key:revoke", "--key", k.id)).toEqual({ id: k.id, revoked: true });
    expect((await client(svc.baseUrl, k.key)("GET", "/account")).status).toBe(401);
    // Revoking twice is harmless.
    expect(await ok("key:revoke", "--key", k.id)).toEqual({ id: k.id, revoked: true });
  });

  test("key:rotate prints {id, key, old_key_valid_until} with an ISO 8601 time grace seconds ahead", async () => {
    const a = await ok("account:create", "--email", email("cli-rotate"));
    const k = await ok("key:create", "--account", a.id, "--mode", "live");
    const before = Date.now();
    const out = await ok("key:rotate", "--key", k.id, "--grace", "600");
    expect(Object.keys(out).sort()).toEqual(["id", "key", "old_key_valid_until"]);
    expect(out.id).toMatch(uuid);
    expect(out.id).not.toBe(k.id);
    expect(out.key).toMatch(/^svk_live_[0-9A-Za-z]{40}$/);
    expect(out.old_key_valid_until).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
    const until = Date.parse(out.old_key_valid_until);
    expect(until).toBeGreaterThanOrEqual(before + 600_000 - 2_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 600_000 + 2_000);
    for (const key of [k.key, out.key]) expect((await client(svc.baseUrl, key)("GET", "/account")).status).toBe(200);
  });
});

describe("errors exit non-zero with a message on stderr and nothing on stdout", () => {
  let accountId: string;
  let revokedKeyId: string;
  beforeAll(async () => {
    accountId = (await ok("account:create", "--email", email("cli-err"))).id;
    revokedKeyId = (await ok("key:create", "--account", accountId, "--mode", "test")).id;
    await ok("key:revoke", "--key", revokedKeyId);
  });

  const missing = "00000000-0000-4000-8000-000000000000";
  const cases: [string, () => string[], RegExp][] = [
    ["an unknown command", () => ["account:delete", "--account", accountId], /unknown command/],
    ["no command at all", () => [], /unknown command/],
    ["account:create without --email", () => ["account:create"], /--email/],
    ["account:create with a bad --plan", () => ["account:create", "--email", email("x"), "--plan", "gold"], /--plan/],
    ["account:create with an address that is not an email", () => ["account:create", "--email", "nobody"], /email/],
    ["account:set without --account", () => ["account:set", "--plan", "free"], /--account/],
    [
      "account:set with a bad --email-verified",
      () => ["account:set", "--account", accountId, "--email-verified", "yes"],
      /--email-verified/,
    ],
    ["account:set on an unknown account", () => ["account:set", "--account", missing, "--plan", "free"], /no account/],
    [
      "account:set with a --pages-per-job that is not a positive integer",
      () => ["account:set", "--account", accountId, "--pages-per-job", "0"],
      /--pages-per-job/,
    ],
    ["key:create without --mode", () => ["key:create", "--account", accountId], /--mode/],
    ["key:create without --account", () => ["key:create", "--mode", "test"], /--account/],
    ["key:create with a bad mode", () => ["key:create", "--account", accountId, "--mode", "prod"], /--mode/],
    [
      "key:create with a bad scope",
      () => ["key:create", "--account", accountId, "--mode", "test", "--scopes", "jobs:read,files:everything"],
      /scope/,
    ],
    [
      "key:create with a bad --expires-in",
      () => ["key:create", "--account", accountId, "--mode", "test", "--expires-in", "soon"],
      /--expires-in/,
    ],
    ["key:create for an unknown account", () => ["key:create", "--account", missing, "--mode", "test"], /./],
    ["key:revoke without --key", () => ["key:revoke"], /--key/],
    ["key:revoke of an unknown key id", () => ["key:revoke", "--key", missing], /no key/],
    ["key:revoke of a key id that is not a uuid", () => ["key:revoke", "--key", "svk_test_abc"], /./],
    ["key:rotate of an unknown key id", () => ["key:rotate", "--key", missing, "--grace", "10"], /no key/],
    ["key:rotate without --grace", () => ["key:rotate", "--key", revokedKeyId], /--grace/],
    ["key:rotate with a negative --grace", () => ["key:rotate", "--key", revokedKeyId, "--grace", "-5"], /./],
    ["key:rotate of a revoked key", () => ["key:rotate", "--key", revokedKeyId, "--grace", "10"], /revoked/],
    ["an unknown flag", () => ["account:create", "--email", email("x"), "--admin", "yes"], /./],
  ];

  test.each(cases)("%s", async (_name, makeArgs, message) => {
    const args = makeArgs();
    const r = await admin(...args);
    expect({ args, code: r.code === 0 ? 0 : "non-zero" }).toEqual({ args, code: "non-zero" });
    expect(r.stdout.trim()).toBe("");
    expect(r.stderr).toMatch(/error/i);
    expect(r.stderr).toMatch(message);
  });

  test("a failed command changes nothing", async () => {
    const before = await svc.sql`SELECT count(*)::int AS n FROM api_keys`;
    await admin("key:create", "--account", accountId, "--mode", "test", "--scopes", "nope");
    const after = await svc.sql`SELECT count(*)::int AS n FROM api_keys`;
    expect(after[0]!.n).toBe(before[0]!.n);
  });

  test("a duplicate email is refused", async () => {
    const e = email("dup");
    await ok("account:create", "--email", e);
    const r = await admin("account:create", "--email", e);
    expect(r.code).not.toBe(0);
    expect(r.stdout.trim()).toBe("");
    expect(r.stderr.length).toBeGreaterThan(0);
  });
});
