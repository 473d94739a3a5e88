// Endpoint secrets at rest: AES-256-GCM under the server key, bound to the endpoint id.
import { describe, expect, test } from "bun:test";
import { generateEndpointSecret, openSecret, parseServerKey, sealSecret } from "../../src/delivery/secrets";

// Stands in for Postgres' server_secrets table: the first INSERT wins, SELECT returns it.
function fakeSql() {
  let stored: Uint8Array | null = null;
  const tag = (strings: TemplateStringsArray, ...values: unknown[]) => {
    const q = strings.join("$");
    if (q.includes("INSERT INTO server_secrets")) {
      stored ??= values[1] as Uint8Array;
      return Promise.resolve([]);
    }
    if (q.includes("SELECT value FROM server_secrets")) return Promise.resolve(stored ? [{ value: stored }] : []);
    throw new Error("unexpected query " + q);
  };
  return tag as never;
}

describe("webhook endpoint secrets", () => {
  test("secrets look like whsec_ followed by 32 url-safe characters, and differ", () => {
    const a = generateEndpointSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/);
    expect(generateEndpointSecret()).not.toBe(a);
  });

  test("a sealed secret opens again, and its ciphertext does not contain it", async () => {
    const sql = fakeSql();
    const secret = generateEndpointSecret();
    const sealed = await sealSecret(sql, "ep-1", secret);
    expect(sealed.ciphertext.includes(Buffer.from(secret))).toBe(false);
    expect(sealed.ciphertext.length).toBe(12 + 16 + Buffer.byteLength(secret));
    expect(await openSecret(sql, "ep-1", sealed)).toBe(secret);
  });

  test("a ciphertext moved to another endpoint does not open (the id is authenticated)", async () => {
    const sql = fakeSql();
    const sealed = await sealSecret(sql, "ep-1", generateEndpointSecret());
    await expect(openSecret(sql, "ep-2", sealed)).rejects.toThrow();
  });

  test("a tampered ciphertext does not open", async () => {
    const sql = fakeSql();
    const sealed = await sealSecret(sql, "ep-1", generateEndpointSecret());
    sealed.ciphertext[sealed.ciphertext.length - 1]! ^= 1;
    await expect(openSecret(sql, "ep-1", sealed)).rejects.toThrow();
  });

  test("a secret sealed under a key this node does not hold fails with a message naming the key, not the secret", async () => {
    const sql = fakeSql();
    const sealed = await sealSecret(sql, "ep-1", "whsec_secret_never_shown");
    const err = (await openSecret(sql, "ep-1", { ...sealed, keyId: "0123456789abcdef" }).catch((e) => e)) as Error;
    expect(err.message).toContain("WEBHOOK_SECRET_KEY");
    expect(err.message).not.toContain("whsec_secret_never_shown");
  });

  test("WEBHOOK_SECRET_KEY is 32 bytes as hex or base64", () => {
    const hex = "ab".repeat(32);
    expect(parseServerKey(hex)).toEqual(Buffer.from(hex, "hex"));
    const b64 = Buffer.alloc(32, 7).toString("base64");
    expect(parseServerKey(b64)).toEqual(Buffer.alloc(32, 7));
    expect(parseServerKey(Buffer.alloc(32, 250).toString("base64url"))).toEqual(Buffer.alloc(32, 250));
    for (const bad of ["", "short", "ab".repeat(31), "ab".repeat(33), Buffer.alloc(31).toString("base64")]) {
      expect(() => parseServerKey(bad)).toThrow("WEBHOOK_SECRET_KEY");
    }
  });
});
