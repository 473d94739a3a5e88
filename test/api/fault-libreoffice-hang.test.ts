// A LibreOffice conversion that hangs (its soffice processes frozen with SIGSTOP mid-job): the
// job fails with the documented conversion_failed after LIBREOFFICE_TIMEOUT_S, its reservation
// is released and nothing is charged; the frozen processes are killed and the next conversion
// runs on a fresh LibreOffice. (A worker SIGKILLed mid-job: test/api/queue-crash.test.ts.)
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { corpusDir, hasCorpus, startService, type Service } from "../support/service";
import { createJob, upload, waitJobRow } from "../support/jobs";
import { waitFor } from "../support/wait";

setDefaultTimeout(240_000);

const docx = join(corpusDir, "files", "docx-with-images.docx");
const haveInputs = hasCorpus;

let svc: Service;
beforeAll(async () => {
  if (!haveInputs) return;
  if (!Bun.which("soffice"))
    throw new Error("soffice is not installed (LibreOffice; scripts/setup.sh installs it): this test needs it");
  svc = await startService({ workers: 1, env: { LIBREOFFICE_TIMEOUT_S: "8" } });
});
afterAll(async () => {
  await svc?.stop();
});

/** Every descendant of `root` whose command line contains `needle`. */
function descendants(root: number, needle: string): number[] {
  const parent = new Map<number, number>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {}
  }
  const out: number[] = [];
  for (const pid of parent.keys()) {
    let p: number | undefined = pid;
    while (p && p !== root && p !== 1) p = parent.get(p);
    if (p !== root) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(needle)) out.push(pid);
    } catch {}
  }
  return out;
}

describe.skipIf(!haveInputs)("a hanging LibreOffice conversion", () => {
  test("fails the job with conversion_failed, releases the credits, charges nothing; the next conversion succeeds", async () => {
    const { key } = await svc.newKey({ mode: "live" });
    const up = await upload(svc, key, docx);
    expect(up.status).toBe(201);
    // Warm LibreOffice with one conversion, so its processes exist before the job to freeze.
    const warm = await createJob(svc, key, { operation: "convert", file_id: up.json.id, options: { target: "pdf" } });
    expect((await waitJobRow(svc, warm.id, ["succeeded", "failed"], 120_000)).status).toBe("succeeded");

    const hung = await createJob(svc, key, { operation: "convert", file_id: up.json.id, options: { target: "pdf" } });
    await waitJobRow(svc, hung.id, ["running"], 30_000);
    const frozen = await waitFor(
      "soffice processes",
      () => {
        const pids = descendants(svc.proc.pid, "soffice");
        return pids.length ? pids : undefined;
      },
      10_000,
    );
    for (const p of frozen) process.kill(p, "SIGSTOP");
    const row = await waitJobRow(svc, hung.id, ["succeeded", "failed"], 90_000);
    expect(row.status).toBe("failed");
    expect(row.error.code).toBe("conversion_failed");
    expect(row.attempts).toBe(1);
    const ledger =
      await svc.sql`SELECT entry, count(*)::int AS n FROM credit_ledger WHERE job_id = ${hung.id} GROUP BY entry ORDER BY entry`;
    expect(ledger.map((l) => `${l.entry}:${l.n}`)).toEqual(["release:1", "reserve:1"]);
    // The frozen processes were killed with their process group.
    await waitFor(
      "frozen soffice gone",
      () => frozen.every((p) => !existsSync(`/proc/${p}`) || readFileSync(`/proc/${p}/stat`, "utf8").includes(") Z ")),
      15_000,
      200,
    );

    const next = await createJob(svc, key, { operation: "convert", file_id: up.json.id, options: { target: "pdf" } });
    const done = await waitJobRow(svc, next.id, ["succeeded", "failed"], 120_000);
    expect(done.status).toBe("succeeded");
    const charges = await svc.sql`SELECT job_id FROM credit_ledger WHERE entry = 'charge'`;
    expect(charges.map((c) => c.job_id).sort()).toEqual([warm.id, next.id].sort());
  });
});
