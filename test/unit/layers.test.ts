// Rule (docs/architecture.md, "Layers"): every import under src/ points down the layers
// http -> modules -> (queue, billing, storage, delivery) -> domain, and no files import each other in a circle.
// The imports are read from the sources as text; each layer lists the top-level entries of src/.
import { describe, expect, test } from "bun:test";
import { Glob } from "bun";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = resolve(import.meta.dir, "../..");

/** Top to bottom. An import may point into its own layer or any layer below, never above. */
const layers: string[][] = [
  ["main.ts", "roles", "admin"], // processes: the supervisor, its children, the operator CLI
  ["http", "worker"], // the API server (app, route table, OpenAPI, console) and the job runner
  ["modules"], // one folder per resource: routes, models, services; modules/common is their shared kit
  ["queue", "billing", "storage", "delivery"], // job transitions, credits, blobs and uploads, webhook delivery
  ["presenters", "auth", "events"], // public shapes of objects, API keys, the event log
  ["db", "engine", "convert", "ipc"], // Postgres, the native addon, LibreOffice, JSON-lines child processes
  ["domain"], // catalogues and pure rules: operations, errors, pricing, job states, plans
  ["config.ts", "log.ts"], // environment and logging, used by everything
];

type Graph = Map<string, Set<string>>;

const importPattern = /(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g;

/** File -> files it imports (relative imports only), for every .ts file the glob matches. */
function importGraph(pattern = "src/**/*.ts"): Graph {
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

/** The top-level entry of src/ a file belongs to: "src/queue/finish.ts" -> "queue". */
function unitOf(file: string): string {
  return file.split("/")[1]!;
}

export function upwardEdges(graph: Graph, order: string[][]): string[] {
  const layerOf = new Map(order.flatMap((units, i) => units.map((u) => [u, i] as const)));
  const out: string[] = [];
  for (const [from, tos] of graph) {
    for (const to of tos) {
      const a = layerOf.get(unitOf(from));
      const b = layerOf.get(unitOf(to));
      if (a === undefined) out.push(`${from}: src/${unitOf(from)} is in no layer`);
      else if (b === undefined) out.push(`${to}: src/${unitOf(to)} is in no layer`);
      else if (b < a) out.push(`${from} -> ${to} (layer ${a} imports layer ${b})`);
    }
  }
  return [...new Set(out)];
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

function unitGraph(graph: Graph): Graph {
  const out: Graph = new Map();
  for (const [from, tos] of graph) {
    for (const to of tos) {
      if (unitOf(from) === unitOf(to)) continue;
      if (!out.has(unitOf(from))) out.set(unitOf(from), new Set());
      out.get(unitOf(from))!.add(unitOf(to));
    }
  }
  return out;
}

describe("imports under src/ point down the layers and form no circle", () => {
  const graph = importGraph();

  test("the checks themselves catch an upward import and a circle", () => {
    const bad: Graph = new Map([
      ["src/domain/a.ts", new Set(["src/http/b.ts"])],
      ["src/http/b.ts", new Set(["src/domain/a.ts"])],
    ]);
    expect(upwardEdges(bad, layers)).toEqual(["src/domain/a.ts -> src/http/b.ts (layer 6 imports layer 1)"]);
    expect(cycles(bad)).toEqual([["src/domain/a.ts", "src/http/b.ts", "src/domain/a.ts"]]);
  });

  test("every top-level entry of src/ has a layer", () => {
    const units = new Set([...graph.keys()].map(unitOf));
    const placed = new Set(layers.flat());
    expect([...units].filter((u) => !placed.has(u))).toEqual([]);
  });

  test("no import points to a higher layer", () => {
    expect(graph.size).toBeGreaterThan(50);
    expect(upwardEdges(graph, layers)).toEqual([]);
  });

  test("no files import each other in a circle", () => {
    expect(cycles(graph)).toEqual([]);
  });

  test("no two folders of one layer import each other in a circle", () => {
    expect(cycles(unitGraph(graph))).toEqual([]);
  });

  test("no files of the web console (console/src) import each other in a circle", () => {
    const consoleGraph = importGraph("console/src/**/*.ts");
    expect(consoleGraph.size).toBeGreaterThan(5);
    expect(cycles(consoleGraph)).toEqual([]);
  });
});
