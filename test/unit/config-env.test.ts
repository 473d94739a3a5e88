// Rule (issue #15, "Configuration in one place"): the environment is read only in src/config.ts;
// other modules read `config` (or its sibling objects there). Handing the whole environment on to
// a child process (`{ ...process.env, ... }`) is not reading it, and is allowed.
import { expect, test } from "bun:test";
import { Glob } from "bun";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

const root = resolve(import.meta.dir, "../..");

export function envReads(source: string): string[] {
  return source
    .split("\n")
    .filter((line) => /process\.env|Bun\.env|import\.meta\.env/.test(line.replace(/\.\.\.process\.env\b/g, "")));
}

test("the environment is read only in src/config.ts", () => {
  expect(envReads("const a = process.env.FOO;\nspawn(x, { env: { ...process.env, HOME: h } });")).toEqual([
    "const a = process.env.FOO;",
  ]);
  const offenders: string[] = [];
  for (const file of new Glob("src/**/*.ts").scanSync(root)) {
    if (file === "src/config.ts") continue;
    for (const line of envReads(readFileSync(resolve(root, file), "utf8"))) offenders.push(`${file}: ${line.trim()}`);
  }
  expect(offenders).toEqual([]);
});

/** The variables src/config.ts reads: `process.env.NAME` and the parsers' `int("NAME", ...)`. */
export function configVariables(source: string): string[] {
  const names = [...source.matchAll(/process\.env\.([A-Z][A-Z0-9_]*)|\b(?:int|list)\("([A-Z][A-Z0-9_]*)"/g)].map(
    (m) => (m[1] ?? m[2])!,
  );
  return [...new Set(names)].sort();
}

/** The first cells of the README's Configuration tables, split on commas: one entry per row. */
export function readmeRows(readme: string): string[][] {
  const section = readme.split(/^## /m).find((s) => s.startsWith("Configuration"))!;
  return section
    .split("\n")
    .filter((l) => /^\| [A-Z]/.test(l) && !l.startsWith("| variable"))
    .map((l) =>
      l
        .split("|")[1]!
        .split(",")
        .map((v) => v.trim()),
    );
}

test("config.ts reads only the variables of the README's Configuration tables, each documented in one row", () => {
  const source = readFileSync(resolve(root, "src/config.ts"), "utf8");
  expect(configVariables('int("PORT", 8080); process.env.HOST; list("X_S", [])')).toEqual(["HOST", "PORT", "X_S"]);
  const read = configVariables(source);
  // Set by the supervisor for each child it starts, not by an operator.
  const internal = ["WORKER_NAME", "SUPERVISOR_PID"];
  const rows = readmeRows(readFileSync(resolve(root, "README.md"), "utf8"));
  const documented = rows.flat();
  expect(read.filter((v) => !internal.includes(v) && !documented.includes(v))).toEqual([]);
  expect(documented.filter((v) => !read.includes(v))).toEqual([]);
  expect(documented.filter((v, i) => documented.indexOf(v) !== i)).toEqual([]);
});
