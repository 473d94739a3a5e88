// Builds the web console (console/) into console/dist: the app bundled by Bun.build with
// content-hashed names, the pages that reference them, and the vendored pdf.js data and Redoc
// bundle under versioned names. Run by scripts/setup.sh; `bun run build:console` by hand.
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";

const root = resolve(import.meta.dir, "..");
const src = join(root, "console");
const pkgVersion = (name: string) =>
  JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8")).version as string;

export async function buildConsole(outDir = join(src, "dist")): Promise<void> {
  rmSync(outDir, { recursive: true, force: true });
  const assets = join(outDir, "assets");
  mkdirSync(assets, { recursive: true });

  const result = await Bun.build({
    entrypoints: [join(src, "src/main.ts")],
    outdir: assets,
    target: "browser",
    format: "esm",
    splitting: true,
    minify: true,
    sourcemap: "linked",
    naming: { entry: "[name]-[hash].[ext]", chunk: "chunk-[hash].[ext]", asset: "[name]-[hash].[ext]" },
  });
  if (!result.success) throw new AggregateError(result.logs, "console build failed");
  const entry = result.outputs.find((o) => o.kind === "entry-point" && o.path.endsWith(".js"));
  const css = result.outputs.filter((o) => o.path.endsWith(".css"));
  if (!entry) throw new Error("console build produced no entry point");

  // pdf.js: its worker, WebAssembly image decoders (JBIG2, JPEG 2000), fonts and CMaps, under
  // the package version so the worker URL the app computes (pdfjs.version) is immutable.
  const pdfjs = join(root, "node_modules/pdfjs-dist");
  const pdfjsOut = join(assets, `pdfjs-${pkgVersion("pdfjs-dist")}`);
  mkdirSync(pdfjsOut, { recursive: true });
  cpSync(join(pdfjs, "build/pdf.worker.min.mjs"), join(pdfjsOut, "pdf.worker.min.mjs"));
  for (const dir of ["wasm", "standard_fonts", "cmaps", "iccs"])
    cpSync(join(pdfjs, dir), join(pdfjsOut, dir), { recursive: true });

  const redocName = `redoc-${pkgVersion("redoc")}.standalone.js`;
  cpSync(join(root, "node_modules/redoc/bundles/redoc.standalone.js"), join(assets, redocName));

  const fill = (template: string, values: Record<string, string>) =>
    template.replace(/\{\{(\w+)\}\}/g, (_, k: string) => values[k] ?? "");
  const base = "/console/assets/";
  writeFileSync(
    join(outDir, "index.html"),
    fill(readFileSync(join(src, "index.html"), "utf8"), {
      script: base + basename(entry.path),
      styles: css.map((c) => `<link rel="stylesheet" href="${base}${basename(c.path)}">`).join("\n    "),
    }),
  );
  writeFileSync(
    join(outDir, "docs.html"),
    fill(readFileSync(join(src, "docs.html"), "utf8"), {
      redoc: base + redocName,
      docsInit: base + basename(await docsInit(assets)),
    }),
  );
}

/** Redoc's start-up call, as a file (the CSP allows no inline script). */
async function docsInit(assets: string): Promise<string> {
  const code = readFileSync(join(src, "docs-init.js"), "utf8");
  const name = `docs-init-${Bun.hash(code).toString(16)}.js`;
  writeFileSync(join(assets, name), code);
  return name;
}

if (import.meta.main) {
  const t = performance.now();
  await buildConsole();
  console.log(`console built into console/dist in ${Math.round(performance.now() - t)} ms`);
}
