// Runs the Python client's pytest suite against the real service: starts it (test/support/service.ts),
// creates one sandbox key per Python test, and fails when pytest fails. The venv is made by
// scripts/setup.sh (clients/python/.venv with the client and pytest from PyPI).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { startService, type Service } from "../../../test/support/service";

const dir = resolve(import.meta.dir, "..");
const python = join(dir, ".venv/bin/python");
let svc: Service;

beforeAll(async () => {
  svc = await startService({ workers: 1, env: { SANDBOX_OCR: "real" } });
}, 60_000);
afterAll(async () => {
  await svc?.stop();
}, 60_000);

test("the Python client's pytest suite passes against the running service", async () => {
  if (!existsSync(python)) throw new Error(`${python} is missing: run ./scripts/setup.sh (it creates the venv and installs the client and pytest)`);
  const keys: string[] = [];
  for (let i = 0; i < 16; i++) keys.push((await svc.newKey({ mode: "test" })).key);
  const p = Bun.spawn([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], {
    cwd: dir,
    env: { ...process.env, DOCPROC_BASE_URL: svc.baseUrl, DOCPROC_API_KEYS: keys.join(",") },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  console.log(out + err);
  expect(code).toBe(0);
}, 300_000);
