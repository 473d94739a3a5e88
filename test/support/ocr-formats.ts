// The validators of the OCR text formats, as the tests call them: ALTO files against the ALTO
// 4.3 schema (xmllint, Debian libxml2-utils; the schema from scripts/fetch-schemas.sh) and hOCR
// files against the hOCR 1.2 specification (hocr-spec from PyPI, in the venv setup-test.sh
// makes). Each says why it is missing, for the tests to skip with that message.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { root } from "./service";

export const altoSchema = join(process.env.SCHEMA_DIR ?? join(root, "test/schemas"), "alto-4-3.xsd");
const hocrSpec = join(process.env.HOCR_VENV ?? "/var/cache/docproc/venv-hocr", "bin/hocr-spec");

function runs(cmd: string[]): boolean {
  try {
    return Bun.spawnSync(cmd, { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
  } catch {
    return false;
  }
}

/** Why ALTO files cannot be validated here, or null when they can. */
export const altoValidatorMissing: string | null = !runs(["xmllint", "--version"])
  ? "xmllint is not installed (apt-get install libxml2-utils; scripts/setup-test.sh does)"
  : !existsSync(altoSchema)
    ? `${altoSchema} is missing (run scripts/fetch-schemas.sh)`
    : null;

/** Why hOCR files cannot be validated here, or null when they can. */
export const hocrValidatorMissing: string | null = !runs([hocrSpec, "--help"])
  ? `${hocrSpec} is missing (scripts/setup-test.sh installs hocr-spec from PyPI there)`
  : null;

export interface Validation {
  valid: boolean;
  report: string;
}

/** xmllint --schema alto-4-3.xsd: valid when the file is well-formed and the schema accepts it. */
export function validateAlto(path: string): Validation {
  const p = Bun.spawnSync(["xmllint", "--noout", "--nonet", "--schema", altoSchema, path], {
    stdout: "pipe",
    stderr: "pipe",
  });
  return { valid: p.exitCode === 0, report: p.stdout.toString() + p.stderr.toString() };
}

/** hocr-spec with the standard profile and strict parsing: valid when it reports no error. */
export function validateHocr(path: string): Validation {
  const p = Bun.spawnSync([hocrSpec, "--parse-strict", path], { stdout: "pipe", stderr: "pipe" });
  return { valid: p.exitCode === 0, report: p.stdout.toString() + p.stderr.toString() };
}

/** The same with xmllint: an hOCR file is XHTML, so it must be well-formed XML too. */
export function wellFormed(path: string): Validation {
  const p = Bun.spawnSync(["xmllint", "--noout", "--nonet", path], { stdout: "pipe", stderr: "pipe" });
  return { valid: p.exitCode === 0, report: p.stdout.toString() + p.stderr.toString() };
}
