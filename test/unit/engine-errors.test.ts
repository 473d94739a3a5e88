// Rule (issue #15, "The native boundary written once"): every engine error code of
// crates/engine/src/error.rs maps to a job error code of the catalogue, and no other code is mapped.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { engineErrorCode, engineErrorCodes, jobErrorCodeFor, jobErrorCodeOf } from "../../src/engine/errors";
import { errorCatalogue } from "../../src/domain/errors";
import { jobErrorFrom } from "../../src/worker/errors";

const errorRs = readFileSync(resolve(import.meta.dir, "../../crates/engine/src/error.rs"), "utf8");
/** The wire forms in `ErrorCode::as_str`: `ErrorCode::InvalidPdf => "invalid_pdf",` */
const rustCodes = [...errorRs.matchAll(/ErrorCode::\w+\s*=>\s*"([a-z_]+)"/g)].map((m) => m[1]!);

describe("every engine error code maps to a job error code", () => {
  test("the TypeScript list is the engine's list", () => {
    expect(rustCodes.length).toBeGreaterThanOrEqual(11);
    expect([...engineErrorCodes].sort() as string[]).toEqual([...new Set(rustCodes)].sort());
    expect(Object.keys(jobErrorCodeOf).sort()).toEqual([...engineErrorCodes].sort());
  });

  test.each([...engineErrorCodes])("%s becomes a catalogue code a failed job may carry", (code) => {
    const jobCode = jobErrorCodeOf[code];
    expect(errorCatalogue[jobCode].usedIn).toContain("job");
    const rejection = Object.assign(new Error(`${code}: something went wrong`), { code });
    expect(jobErrorCodeFor(rejection)).toBe(jobCode);
    expect(jobErrorFrom(rejection).code).toBe(jobCode);
  });

  test("the code is read from `code` or from a `code:` message prefix; other codes are internal errors", () => {
    expect(engineErrorCode(new Error("encrypted_input: needs a password"))).toBe("encrypted_input");
    expect(engineErrorCode(Object.assign(new Error("x"), { code: "page_limit" }))).toBe("page_limit");
    expect(engineErrorCode(new Error("no code at all"))).toBe("engine_error");
    expect(jobErrorCodeFor(Object.assign(new Error("x"), { code: "not_an_engine_code" }))).toBe("internal_error");
  });
});
