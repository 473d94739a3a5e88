// A self-signed certificate for the name "localhost" only (no IP SAN), for the tests whose
// receivers speak https (live-mode webhooks need it): made with openssl in a temporary
// directory, trusted by a spawned service through NODE_EXTRA_CA_CERTS=certPath.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export type LocalhostCert = { cert: string; key: string; certPath: string; remove(): void };

/** Makes the certificate; throws with openssl's message when it cannot (no silent plain-http run). */
export function makeLocalhostCert(prefix: string): LocalhostCert {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-tls-`));
  const certPath = join(dir, "cert.pem");
  const keyPath = join(dir, "key.pem");
  const gen = Bun.spawnSync(
    [
      "openssl",
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      keyPath,
      "-out",
      certPath,
      "-days",
      "2",
    ].concat(["-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"]),
  );
  if (gen.exitCode !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`openssl could not make a test certificate: ${gen.stderr.toString()}`);
  }
  return {
    cert: readFileSync(certPath, "utf8"),
    key: readFileSync(keyPath, "utf8"),
    certPath,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
