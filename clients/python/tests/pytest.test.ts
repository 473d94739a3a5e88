// Runs the Python client's pytest suite against the real service: starts it (test/support/service.ts),
// creates one sandbox key per Python test, and fails when pytest fails. The venv is made by
// scripts/setup-test.sh (clients/python/.venv with the client and pytest from PyPI). When Garage is
// installed, a second service backed by it serves the object-store tests (tests/test_presigned.py);
// without it those tests skip.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { startService, type Service } from "../../../test/support/service";
import { garageAvailable, garageBin, startGarage, type Garage } from "../../../test/support/garage";

const dir = resolve(import.meta.dir, "..");
const python = join(dir, ".venv/bin/python");
let svc: Service;
let garage: Garage | undefined;
let s3svc: Service | undefined;

if (!garageAvailable) console.log(`skipping the Python client's presigned tests: no Garage at ${garageBin} (./scripts/setup-test.sh installs it)`);

beforeAll(async () => {
  svc = await startService({ workers: 1, env: { SANDBOX_OCR: "real" } });
  if (garageAvailable) {
    garage = await startGarage();
    s3svc = await startService({ workers: 1, env: garage.env });
  }
}, 90_000);
afterAll(async () => {
  await svc?.stop();
  await s3svc?.stop();
  await garage?.stop();
}, 60_000);

test("the Python client's pytest suite passes against the running service", async () => {
  if (!existsSync(python)) throw new Error(`${python} is missing: run ./scripts/setup-test.sh (it creates the venv and installs the client and pytest)`);
  const keys: string[] = [];
  for (let i = 0; i < 16; i++) keys.push((await svc.newKey({ mode: "test" })).key);
  const s3: Record<string, string> = {};
  if (s3svc && garage) {
    const s3keys: string[] = [];
    for (let i = 0; i < 4; i++) s3keys.push((await s3svc.newKey({ mode: "test" })).key);
    Object.assign(s3, { DOCPROC_S3_BASE_URL: s3svc.baseUrl, DOCPROC_S3_API_KEYS: s3keys.join(","), DOCPROC_S3_ENDPOINT: garage.endpoint });
  }
  const p = Bun.spawn([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], {
    cwd: dir,
    env: { ...process.env, DOCPROC_BASE_URL: svc.baseUrl, DOCPROC_API_KEYS: keys.join(","), ...s3 },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  console.log(out + err);
  expect(code).toBe(0);
}, 300_000);
