// Rule (issue #15, "Configuration in one place"): the environment is read only in src/config.ts;
// other modules read `config` (or its sibling objects there). Handing the whole environment on to
// a child process (`{ ...process.env, ... }`) is not reading it, and is allowed.
import { expect, test } from "bun:test";
import { Glob } from "bun";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

const root = resolve(import.meta.dir, "../..");

export function envReads(source: string): string[] {
  return source.split("\n").filter((line) => /process\.env|Bun\.env|import\.meta\.env/.test(line.replace(/\.\.\.process\.env\b/g, "")));
}

test("the environment is read only in src/config.ts", () => {
  expect(envReads('const a = process.env.FOO;\nspawn(x, { env: { ...process.env, HOME: h } });')).toEqual(["const a = process.env.FOO;"]);
  const offenders: string[] = [];
  for (const file of new Glob("src/**/*.ts").scanSync(root)) {
    if (file === "src/config.ts") continue;
    for (const line of envReads(readFileSync(resolve(root, file), "utf8"))) offenders.push(`${file}: ${line.trim()}`);
  }
  expect(offenders).toEqual([]);
});
