// Reference docs stay navigable: every relative link in README.md, docs/*.md and bench/README.md
// names a file of the repository, and an #anchor names a heading of that file (GitHub's rule).
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative, resolve } from "node:path";

const root = resolve(import.meta.dir, "../..");
const docs = [
  join(root, "README.md"),
  join(root, "bench/README.md"),
  ...readdirSync(join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => join(root, "docs", f)),
];

const slug = (h: string) =>
  h
    .trim()
    .toLowerCase()
    .replace(/`/g, "")
    .replace(/[^\p{L}\p{N}_\- ]/gu, "")
    .replace(/ /g, "-");

function anchors(path: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const m = !fenced && /^#{1,6} (.*)$/.exec(line);
    if (!m) continue;
    const s = slug(m[1]!);
    const n = seen.get(s) ?? 0;
    seen.set(s, n + 1);
    out.add(n ? `${s}-${n}` : s);
  }
  return out;
}

test("every relative link in the reference docs names an existing file and heading", () => {
  const broken: string[] = [];
  for (const file of docs) {
    const text = readFileSync(file, "utf8").replace(/```[\s\S]*?```/g, "");
    for (const [, link] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(link!)) continue;
      const [path, frag] = link!.split("#") as [string, string | undefined];
      const target = path ? normalize(join(dirname(file), path)) : file;
      if (!existsSync(target)) broken.push(`${relative(root, file)}: ${link} (no such file)`);
      else if (frag && target.endsWith(".md") && !anchors(target).has(frag))
        broken.push(`${relative(root, file)}: ${link} (no such heading)`);
    }
  }
  expect(broken).toEqual([]);
});
