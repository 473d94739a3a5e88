// Runs inside the fresh-machine container of quick-start.bench.ts, in the clone, after
// scripts/start.sh answered: an account and a key by the admin CLI, then a real OCR job over HTTP
// (a page rendered to JPEG by the service, then read back). Plain fetch, as a first user's
// script would: the TypeScript client's packages are a test dependency, not installed by
// start.sh. Prints one JSON line with the recognised text, so the bench can check the read.
import { minimalPdf } from "../../test/support/pdf";

const baseUrl = process.env.DOCPROC_URL!;

async function admin(args: string[]): Promise<Record<string, unknown>> {
  const p = Bun.spawn(["bun", "run", "admin", ...args], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = [await new Response(p.stdout).text(), await new Response(p.stderr).text(), await p.exited];
  if (code !== 0) throw new Error(`admin ${args[0]}: ${err || out}`);
  return JSON.parse(out.slice(out.indexOf("{")));
}

const account = await admin(["account:create", "--email", `quick-start-${Date.now()}@example.com`]);
const { key } = await admin(["key:create", "--account", String(account.id), "--mode", "live"]);
const auth = { Authorization: `Bearer ${key}` };

async function call(path: string, init: RequestInit = {}): Promise<Response> {
  const r = await fetch(`${baseUrl}${path}`, { ...init, headers: { ...auth, ...init.headers } });
  if (!r.ok) throw new Error(`${init.method ?? "GET"} ${path}: ${r.status} ${await r.text()}`);
  return r;
}

async function upload(bytes: Uint8Array, name: string, type: string): Promise<string> {
  const form = new FormData();
  form.append("file", new Blob([bytes], { type }), name);
  return ((await (await call("/files", { method: "POST", body: form })).json()) as { id: string }).id;
}

/** Creates the job and waits for it (polling, as the API's guide shows); its result's bytes. */
async function run(body: Record<string, unknown>, format = "download"): Promise<Uint8Array> {
  const job = (await (
    await call("/jobs", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) })
  ).json()) as { id: string };
  for (const deadline = Date.now() + 300_000; Date.now() < deadline; await Bun.sleep(250)) {
    const j = (await (await call(`/jobs/${job.id}`)).json()) as { status: string; error?: unknown };
    if (j.status === "succeeded")
      return new Uint8Array(await (await call(`/jobs/${job.id}/result?format=${format}`)).arrayBuffer());
    if (j.status === "failed" || j.status === "cancelled") throw new Error(`job ${job.id}: ${JSON.stringify(j)}`);
  }
  throw new Error(`job ${job.id} did not finish in 300 s`);
}

const pdf = await upload(minimalPdf(1, "Quick start"), "quick-start.pdf", "application/pdf");
const jpg = await run({ operation: "convert", file_id: pdf, options: { target: "jpg" } });
const scan = await upload(jpg, "quick-start.jpg", "image/jpeg");
const blocks = JSON.parse(
  new TextDecoder().decode(await run({ operation: "ocr", file_id: scan, options: { output: "blocks" } }, "json")),
);
const text = ((blocks.pages ?? []) as { text?: string }[]).map((p) => p.text ?? "").join("\n");
console.log(JSON.stringify({ text }));
