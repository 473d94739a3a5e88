// Endpoint secrets: generated here, stored only encrypted (AES-256-GCM under a server key) so a
// dispatcher can sign with them, and shown to the client once, in the create response.
// The server key is WEBHOOK_SECRET_KEY when set (64 hex chars or base64 of 32 bytes), otherwise
// a random key created once in `server_secrets`, so every node sharing the database can sign.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import type { Sql } from "../db/client";
import { secretsConfig } from "../config";

export const secretPrefix = "whsec_";
const dbKeyName = "webhook_secret_key";

export function generateEndpointSecret(): string {
  return secretPrefix + randomBytes(24).toString("base64url");
}

interface ServerKey {
  id: string;
  key: Buffer;
}

function keyId(key: Buffer): string {
  return createHash("sha256").update("webhook-secret-key-id:").update(key).digest("hex").slice(0, 16);
}

/** Parses WEBHOOK_SECRET_KEY: 64 hex characters, or base64 / base64url of exactly 32 bytes. */
export function parseServerKey(raw: string): Buffer {
  const s = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(s)) return Buffer.from(s, "hex");
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(s)) {
    const b = Buffer.from(s.replace(/-/g, "+").replace(/_/g, "/"), "base64");
    if (b.length === 32) return b;
  }
  throw new Error("WEBHOOK_SECRET_KEY must be 32 bytes as 64 hex characters or base64 (e.g. `openssl rand -hex 32`)");
}

const envKey: ServerKey | null = (() => {
  const raw = secretsConfig.webhookSecretKey;
  if (!raw) return null;
  const key = parseServerKey(raw);
  return { id: keyId(key), key };
})();

let dbKey: Promise<ServerKey> | null = null;

function databaseKey(sql: Sql): Promise<ServerKey> {
  dbKey ??= (async () => {
    await sql`INSERT INTO server_secrets (name, value) VALUES (${dbKeyName}, ${randomBytes(32)}) ON CONFLICT (name) DO NOTHING`;
    const [row] = await sql`SELECT value FROM server_secrets WHERE name = ${dbKeyName}`;
    const key = Buffer.from(row!.value as Uint8Array);
    return { id: keyId(key), key };
  })().catch((e) => {
    dbKey = null;
    throw e;
  });
  return dbKey;
}

/** The key new secrets are encrypted with: WEBHOOK_SECRET_KEY if set, else the database key. */
async function currentKey(sql: Sql): Promise<ServerKey> {
  return envKey ?? databaseKey(sql);
}

/** Any key we hold with this id: lets secrets made under the database key survive setting WEBHOOK_SECRET_KEY later. */
async function keyById(sql: Sql, id: string): Promise<ServerKey | null> {
  if (envKey?.id === id) return envKey;
  const k = await databaseKey(sql);
  return k.id === id ? k : null;
}

export interface SealedSecret {
  ciphertext: Buffer;
  keyId: string;
}

/** `endpointId` is bound as additional data, so a ciphertext copied to another row will not open. */
export async function sealSecret(sql: Sql, endpointId: string, secret: string): Promise<SealedSecret> {
  const k = await currentKey(sql);
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", k.key, iv);
  cipher.setAAD(Buffer.from(endpointId));
  const ct = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
  return { ciphertext: Buffer.concat([iv, cipher.getAuthTag(), ct]), keyId: k.id };
}

export async function openSecret(sql: Sql, endpointId: string, sealed: SealedSecret): Promise<string> {
  const k = await keyById(sql, sealed.keyId);
  if (!k)
    throw new Error(
      `webhook endpoint ${endpointId}: its secret was encrypted under server key ${sealed.keyId}, which this node does not hold (check WEBHOOK_SECRET_KEY)`,
    );
  const buf = Buffer.from(sealed.ciphertext);
  const decipher = createDecipheriv("aes-256-gcm", k.key, buf.subarray(0, 12));
  decipher.setAAD(Buffer.from(endpointId));
  decipher.setAuthTag(buf.subarray(12, 28));
  return Buffer.concat([decipher.update(buf.subarray(28)), decipher.final()]).toString("utf8");
}
