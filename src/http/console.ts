// Serves the web console (GET /console) and the offline API reference (GET /docs) from the
// build of console/ (scripts/build-console.ts): static files only, so the console is a plain
// client of the public API. Hashed assets are cached for a year; the two pages are revalidated.
import { resolve, sep } from "node:path";

export const consoleDist = resolve(import.meta.dir, "../../console/dist");

// Same-origin only: no CDN can be reached, and nothing from elsewhere runs. Redoc injects
// <style> elements (styled-components), pdf.js compiles WebAssembly decoders.
const securityHeaders: Record<string, string> = {
  "content-security-policy":
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' blob: data:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

function notBuilt(): Response {
  return new Response(
    "The console is not built. Run `bun run build:console` (./scripts/setup.sh does it) and reload.\n",
    {
      status: 503,
      headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
    },
  );
}

async function page(name: "index.html" | "docs.html"): Promise<Response> {
  const file = Bun.file(`${consoleDist}/${name}`);
  if (!(await file.exists())) return notBuilt();
  return new Response(file, {
    headers: { ...securityHeaders, "content-type": "text/html; charset=utf-8", "cache-control": "no-cache" },
  });
}

async function asset(rest: string): Promise<Response> {
  const root = `${consoleDist}${sep}assets`;
  const path = resolve(root, decodeURIComponent(rest));
  const file = Bun.file(path);
  if (!path.startsWith(root + sep) || !(await file.exists())) {
    return new Response("Not found\n", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });
  }
  // Every asset name carries a content hash or a package version, so it never changes.
  const type = path.endsWith(".mjs") ? "text/javascript; charset=utf-8" : file.type;
  return new Response(file, {
    headers: { ...securityHeaders, "content-type": type, "cache-control": "public, max-age=31536000, immutable" },
  });
}

/** Adds the console's routes to the Elysia app (outside /api/v1). */
export function consoleRoutes(app: any) {
  app.get("/console", () => page("index.html"));
  app.get("/console/", () => page("index.html"));
  app.get("/docs", () => page("docs.html"));
  app.get("/console/assets/*", ({ params }: { params: Record<string, string> }) => asset(params["*"] ?? ""));
}
