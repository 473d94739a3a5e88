// The admin CLI (docs/operating.md, "Admin CLI"): one JSON object on stdout, exit 0; errors on stderr, exit 1.
import { parseArgs } from "node:util";
import { config } from "../config";
import { connect, disconnect } from "../db/client";
import { migrate } from "../db/migrate";
import { resolveDatabaseUrl } from "../db/resolve";
import { createAccount, createKey, revokeKey, rotateKey, setAccount } from "./commands";

function need(v: string | undefined, flag: string): string {
  if (v === undefined || v === "") throw new Error(`--${flag} is required`);
  return v;
}

function plan(v: string | undefined): "starter" | "free" | undefined {
  if (v === undefined) return undefined;
  if (v !== "starter" && v !== "free") throw new Error("--plan must be starter or free");
  return v;
}

function nonNegInt(v: string, flag: string): number {
  if (!/^\d+$/.test(v)) throw new Error(`--${flag} must be a non-negative integer`);
  return Number(v);
}

/** `--pages-per-job N` (a positive integer) or `default` (the mode's limit again). */
function pagesPerJobFlag(v: string | undefined): number | null | undefined {
  if (v === undefined) return undefined;
  if (v === "default") return null;
  if (!/^[1-9]\d{0,8}$/.test(v)) throw new Error("--pages-per-job must be a positive integer or `default`");
  return Number(v);
}

const commands = ["account:create", "account:set", "key:create", "key:revoke", "key:rotate"];

async function main() {
  const [command, ...rest] = process.argv.slice(2);
  // Refuse an unknown command before touching (or starting) a database.
  if (!commands.includes(command ?? ""))
    throw new Error(`unknown command ${command ?? "(none)"}; use ${commands.join(", ")}`);
  const { values } = parseArgs({
    args: rest,
    options: {
      email: { type: "string" },
      plan: { type: "string" },
      unverified: { type: "boolean" },
      account: { type: "string" },
      "email-verified": { type: "string" },
      "spending-cap-eur": { type: "string" },
      "pages-per-job": { type: "string" },
      mode: { type: "string" },
      scopes: { type: "string" },
      "expires-in": { type: "string" },
      key: { type: "string" },
      grace: { type: "string" },
    },
    strict: true,
  });
  const db = await resolveDatabaseUrl({ startEmbedded: true });
  const sql = connect(db.url, 2);
  try {
    await migrate(sql);
    let out: unknown;
    switch (command) {
      case "account:create":
        out = await createAccount(sql, need(values.email, "email"), plan(values.plan) ?? "starter", !values.unverified);
        break;
      case "account:set": {
        const ev = values["email-verified"];
        if (ev !== undefined && ev !== "true" && ev !== "false")
          throw new Error("--email-verified must be true or false");
        const cap = values["spending-cap-eur"];
        if (cap !== undefined && !/^\d+(\.\d{1,2})?$/.test(cap))
          throw new Error("--spending-cap-eur must be a non-negative amount");
        out = await setAccount(sql, need(values.account, "account"), {
          plan: plan(values.plan),
          emailVerified: ev === undefined ? undefined : ev === "true",
          spendingCapEur: cap === undefined ? undefined : Number(cap),
          pagesPerJob: pagesPerJobFlag(values["pages-per-job"]),
        });
        break;
      }
      case "key:create": {
        const mode = need(values.mode, "mode");
        if (mode !== "test" && mode !== "live") throw new Error("--mode must be test or live");
        const scopes = values.scopes
          ? values.scopes
              .split(",")
              .map((s) => s.trim())
              .filter(Boolean)
          : undefined;
        const exp = values["expires-in"] === undefined ? undefined : nonNegInt(values["expires-in"], "expires-in");
        out = await createKey(sql, need(values.account, "account"), mode, scopes, exp);
        break;
      }
      case "key:revoke":
        out = await revokeKey(sql, need(values.key, "key"));
        break;
      case "key:rotate":
        out = await rotateKey(sql, need(values.key, "key"), nonNegInt(need(values.grace, "grace"), "grace"));
        break;
      default:
        throw new Error(
          `unknown command ${command ?? "(none)"}; use account:create, account:set, key:create, key:revoke, key:rotate`,
        );
    }
    process.stdout.write(JSON.stringify(out) + "\n");
  } finally {
    await disconnect();
    await db.stop();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`error: ${(e as Error).message}\n`);
    process.exit(1);
  },
);
void config;
