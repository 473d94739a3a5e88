// The API process SIGKILLed in the middle of POST /jobs with an Idempotency-Key: whatever the
// moment of the kill, retrying with the same key (once the supervisor has restarted the API)
// ends with exactly one job for that key, and no idempotency record is left in_progress.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { useService } from "../support/use-service";
import { multipart, postFiles, rolePids } from "../support/jobs";
import { minimalPdf } from "../support/pdf";
import { waitFor } from "../support/wait";

setDefaultTimeout(180_000);

// No workers: jobs stay queued, so the job table changes only through POST /jobs.
const svc = useService({ workers: 0 });

describe("API killed mid-request", () => {
  test("a retry with the same Idempotency-Key gives one job, at every kill moment tried", async () => {
    const rounds = 6;
    const seen = new Map<string, string>(); // idempotency key -> job id
    for (let round = 0; round < rounds; round++) {
      const { key } = await svc.newKey({ mode: "live" });
      const auth = { authorization: `Bearer ${key}` };
      const mp = multipart([
        { name: "file", filename: "a.pdf", contentType: "application/pdf", data: minimalPdf(1, "kill") },
      ]);
      const up = await postFiles(svc, key, mp.body, mp.contentType);
      expect(up.status).toBe(201);
      const idem = `kill-${round}-${crypto.randomUUID()}`;
      const send = () =>
        fetch(`${svc.baseUrl}/jobs`, {
          method: "POST",
          headers: { ...auth, "content-type": "application/json", "idempotency-key": idem },
          body: JSON.stringify({ operation: "compress", file_id: up.json.id }),
        });
      const [api] = await rolePids(svc, "api");
      expect(api).toBeGreaterThan(0);
      const first = send().then(
        async (r) => ({ status: r.status, json: (await r.json()) as any }),
        () => null,
      );
      // Kill moments spread from "before the request is read" to "after the answer".
      await Bun.sleep(round * 6);
      process.kill(api!, "SIGKILL");
      const answered = await first;
      if (answered?.status === 202) seen.set(idem, answered.json.id);
      await waitFor(
        "a restarted API",
        async () => {
          const pids = await rolePids(svc, "api");
          if (!pids.length || pids[0] === api) return false;
          try {
            return (await fetch(`${svc.origin}/healthz`)).status === 200;
          } catch {
            return false;
          }
        },
        30_000,
        100,
      );
      const retry = await waitFor(
        "the retry accepted",
        async () => {
          const r = await send();
          return r.status === 202 ? ((await r.json()) as any) : undefined;
        },
        30_000,
        250,
      );
      if (seen.has(idem)) expect(retry.id).toBe(seen.get(idem));
      seen.set(idem, retry.id);
      const [{ n }] = (await svc.sql`SELECT count(*)::int AS n FROM jobs WHERE file_ids[1] = ${up.json.id}`) as any;
      expect(n).toBe(1);
    }
    const [{ jobs }] = (await svc.sql`SELECT count(*)::int AS jobs FROM jobs`) as any;
    expect(jobs).toBe(rounds);
    const [{ stuck }] =
      (await svc.sql`SELECT count(*)::int AS stuck FROM idempotency_records WHERE state = 'in_progress'`) as any;
    expect(stuck).toBe(0);
    const [{ reserves }] =
      (await svc.sql`SELECT count(*)::int AS reserves FROM credit_ledger WHERE entry = 'reserve'`) as any;
    expect(reserves).toBe(rounds);
  });
});
