// File-level graphs of who refers to whom, read from the sources as text, and the circles in them:
// TypeScript imports, Rust module paths, C includes and calls. Used by the structure tests.
import { Glob } from "bun";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";

export const root = resolve(import.meta.dir, "../..");

/** File -> the files it refers to. */
export type Graph = Map<string, Set<string>>;

const importPattern = /(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g;

/** TypeScript file -> files it imports (relative imports only, within the pattern's top folder). */
export function importGraph(pattern = "src/**/*.ts"): Graph {
  const graph: Graph = new Map();
  for (const file of new Glob(pattern).scanSync(root)) {
    const targets = new Set<string>();
    for (const m of readFileSync(join(root, file), "utf8").matchAll(importPattern)) {
      const spec = m[1]!;
      const base = relative(root, resolve(root, dirname(file), spec));
      // An import that leaves the checked tree has no layer (src/engine/native.ts -> native/, the
      // addon and its generated declarations, which exist only after `bun run build:native`).
      if (base.split("/")[0] !== file.split("/")[0]) continue;
      const target = [`${base}.ts`, join(base, "index.ts"), base].find(
        (c) => existsSync(join(root, c)) && !statSync(join(root, c)).isDirectory(),
      );
      if (!target) throw new Error(`${file}: cannot resolve import "${spec}"`);
      if (target.endsWith(".ts")) targets.add(target); // modules only, not a stylesheet
    }
    graph.set(file, targets);
  }
  return graph;
}

/** Every circle of the graph, each as the path that closes it (depth-first search). */
export function cycles(graph: Graph): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (n: string) => {
    state.set(n, "open");
    stack.push(n);
    for (const m of graph.get(n) ?? []) {
      if (state.get(m) === "open") found.push([...stack.slice(stack.indexOf(m)), m]);
      else if (!state.has(m)) visit(m);
    }
    stack.pop();
    state.set(n, "done");
  };
  for (const n of graph.keys()) if (!state.has(n)) visit(n);
  return found;
}

/** The source without comments (C and Rust: `//` to the end of the line, and block comments). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, " ").replace(/\/\/[^\n]*/g, "");
}

/** `a::{b, c::{d, self}}` -> ["a::b", "a::c::d", "a::c::self"]. */
export function expandUseTree(tree: string): string[] {
  const t = tree.replace(/\s+/g, "");
  const open = t.indexOf("{");
  if (open < 0) return [t.replace(/as\w+$/, "")];
  const prefix = t.slice(0, open);
  const inner = t.slice(open + 1, t.lastIndexOf("}"));
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i <= inner.length; i++) {
    const ch = inner[i];
    if (ch === "{") depth++;
    else if (ch === "}") depth--;
    else if ((ch === "," && depth === 0) || i === inner.length) {
      if (i > start) parts.push(inner.slice(start, i));
      start = i + 1;
    }
  }
  return parts.flatMap((p) => expandUseTree(prefix + p));
}

/**
 * Rust module file -> the module files of the same crate it names through a path that starts at
 * `crate::`, `super::` or `self::` (in `use` declarations and in code). A path names the file of
 * its longest prefix that is a module with a file of its own; an item of a module (a type, a
 * function) counts as that module's. A path to one of the file's own ancestors (`super::Item` of
 * the parent, `crate::Result` of the root) is not counted: a parent module holds what its
 * children share and runs them, so only paths across to siblings and cousins can close a loop.
 * A file's inline `#[cfg(test)]` module is left out: test code is no part of the structure, and
 * its `super::` starts one module further down.
 */
export function rustModuleGraph(srcDir: string): Graph {
  const abs = join(root, srcDir);
  const files = [...new Glob("**/*.rs").scanSync(abs)];
  const moduleOf = (file: string): string[] => {
    const parts = file.replace(/\.rs$/, "").split("/");
    const last = parts[parts.length - 1];
    if (parts.length === 1 && (last === "lib" || last === "main")) return [];
    if (last === "mod") parts.pop();
    return parts;
  };
  const fileOf = new Map(files.map((f) => [moduleOf(f).join("::"), join(srcDir, f)]));
  const graph: Graph = new Map();
  for (const file of files) {
    const self = moduleOf(file);
    let text = code(readFileSync(join(abs, file), "utf8"));
    const tests = text.search(/#\[cfg\(test\)\]\s*mod\s+\w+\s*\{/);
    if (tests >= 0) text = text.slice(0, tests);
    const paths: string[] = [];
    for (const m of text.matchAll(/\buse\s+([^;]+);/g)) paths.push(...expandUseTree(m[1]!));
    const withoutUse = text.replace(/\buse\s+[^;]+;/g, "");
    for (const m of withoutUse.matchAll(/\b(?:crate|super|self)(?:::\w+)+/g)) paths.push(m[0]);
    const targets = new Set<string>();
    for (const p of paths) {
      const segs = p.split("::");
      let base: string[];
      let i = 0;
      if (segs[0] === "crate") {
        base = [];
        i = 1;
      } else if (segs[0] === "super" || segs[0] === "self") {
        base = [...self];
        while (segs[i] === "super" || segs[i] === "self") {
          if (segs[i] === "super") base.pop();
          i++;
        }
      } else continue;
      for (; i < segs.length && fileOf.has([...base, segs[i]].join("::")); i++) base.push(segs[i]!);
      const ancestor = base.length < self.length && base.every((seg, k) => seg === self[k]);
      const target = fileOf.get(base.join("::"));
      if (target && !ancestor && target !== join(srcDir, file)) targets.add(target);
    }
    graph.set(join(srcDir, file), targets);
  }
  return graph;
}

/**
 * C: unit (a .c file with the .h of the same name) -> the units it includes (`#include "x.h"`)
 * or calls a function of (one that the other unit defines with external linkage and the caller
 * does not define itself). Units are named by their path without the extension.
 */
export function cUnitGraph(dir: string): Graph {
  const abs = join(root, dir);
  const names = readdirSync(abs).filter((f) => /\.[ch]$/.test(f));
  const unitOf = (f: string) => join(dir, basename(f).replace(/\.[ch]$/, ""));
  const texts = new Map(names.map((f) => [f, code(readFileSync(join(abs, f), "utf8"))]));
  const definition = /^(?!static\b|typedef\b|extern\b|return\b)[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w*)\s*\([^;{]*\)\s*\{/gm;
  const staticDefinition = /^static\b[\w \t*]*?\b([A-Za-z_]\w*)\s*\(/gm;
  const definedBy = new Map<string, string>();
  const ownNames = new Map<string, Set<string>>();
  for (const [f, text] of texts) {
    const own = new Set<string>();
    for (const m of text.matchAll(definition)) {
      definedBy.set(m[1]!, unitOf(f));
      own.add(m[1]!);
    }
    for (const m of text.matchAll(staticDefinition)) own.add(m[1]!);
    ownNames.set(f, own);
  }
  const graph: Graph = new Map();
  for (const [f, text] of texts) {
    const from = unitOf(f);
    const targets = graph.get(from) ?? new Set<string>();
    for (const m of text.matchAll(/#include\s+"([^"]+)"/g)) {
      if (existsSync(join(abs, m[1]!))) targets.add(unitOf(m[1]!));
    }
    // A header declares; only a .c file calls.
    for (const m of f.endsWith(".c") ? text.matchAll(/\b([A-Za-z_]\w*)\s*\(/g) : []) {
      const to = definedBy.get(m[1]!);
      if (to && !ownNames.get(f)!.has(m[1]!)) targets.add(to);
    }
    targets.delete(from);
    graph.set(from, targets);
  }
  return graph;
}
