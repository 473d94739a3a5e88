// Rule (docs/architecture.md, "Layers"): every import under src/ points down the layers
// http -> modules -> (queue, billing, storage, delivery) -> domain, and no files import each other in a circle.
// The imports are read from the sources as text; each layer lists the top-level entries of src/.
import { describe, expect, test } from "bun:test";
import { cycles, type Graph, importGraph } from "../support/module-graph";

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

  test("no files of the scripts (scripts/) import each other in a circle", () => {
    const scriptsGraph = importGraph("scripts/**/*.ts");
    expect(scriptsGraph.size).toBeGreaterThan(20);
    expect(cycles(scriptsGraph)).toEqual([]);
  });
});
