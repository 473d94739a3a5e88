// Delivery survives the death of every dispatcher: the worker processes are SIGKILLed in the
// middle of a retry schedule and while an attempt is in flight. Pending attempts resume when
// the supervisor restarts the workers; the in-flight attempt is retaken once its lease expires.
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { client } from "../support/service";
import { useService } from "../support/use-service";
import { emit, startReceiver, until } from "../support/webhook-receiver";
import { leaseS } from "../../src/delivery/dispatcher";

setDefaultTimeout(120_000);

const svc = useService({ workers: 1, env: { WEBHOOK_RETRY_DELAYS_S: "1,1,1,1,1" } });
const rx = startReceiver();

afterAll(async () => {
  rx.stop();
});

function workerPids(): number[] {
  const p = Bun.spawnSync(["pgrep", "-P", String(svc.proc.pid), "-f", "roles/worker.ts"]);
  return p.stdout.toString().split(/\s+/).filter(Boolean).map(Number);
}

test("killing every dispatcher mid-schedule loses no attempt: pending attempts resume, an in-flight one is retaken after its lease", async () => {
  const { key, accountId } = await svc.newKey();
  const api = client(svc.baseUrl, key);
  // /crash-fail fails every attempt; /crash-hang holds its first request open until the worker dies.
  let hang = true;
  const failing = (await api("POST", "/webhooks", { url: rx.url("/crash-fail", 500) })).json.id;
  const hanging = (
    await api("POST", "/webhooks", {
      url: rx.url("/crash-hang", async () => {
        if (hang) {
          hang = false;
          await Bun.sleep(30_000);
        }
        return new Response("ok");
      }),
    })
  ).json.id;
  const before = workerPids();
  expect(before.length).toBeGreaterThan(0);

  const event = await emit(svc.sql, accountId, "test", "job.succeeded", {
    id: "crash",
    object: "job",
    status: "succeeded",
  });
  await rx.waitFor(
    () => rx.at("/crash-fail").length === 2 && rx.at("/crash-hang").length === 1,
    30_000,
    "attempt 2 and the hanging attempt",
  );
  await Bun.sleep(100); // attempt 2 recorded; attempt 3 pending for 1 s; the hanging attempt in flight
  const [inFlight] = await svc.sql`SELECT status, locked_until FROM webhook_deliveries WHERE endpoint_id = ${hanging}`;
  expect(inFlight!.status).toBe("in_flight");
  for (const pid of before) process.kill(pid, "SIGKILL");
  const killedAt = Date.now();

  // The supervisor restarts the workers; the schedule of the failing endpoint continues.
  await rx.waitFor(() => rx.at("/crash-fail").length >= 6, 40_000, "the rest of the six attempts");
  const after = workerPids();
  expect(after.length).toBeGreaterThan(0);
  expect(after.some((p) => before.includes(p))).toBe(false);

  // The attempt that was in flight is sent again once its lease expires, with the same event.
  await rx.waitFor(() => rx.at("/crash-hang").length === 2, (leaseS + 20) * 1000, "the retaken in-flight attempt");
  expect(rx.at("/crash-hang")[1]!.at - killedAt).toBeGreaterThanOrEqual((leaseS - 2) * 1000);
  await Bun.sleep(2500);

  const fail = rx.at("/crash-fail");
  expect(fail).toHaveLength(6);
  expect(new Set(fail.map((h) => h.json.id))).toEqual(new Set([event.id]));
  const failLog = (await api("GET", `/webhooks/${failing}/deliveries`)).json.data;
  expect(failLog.map((d: any) => [d.attempt, d.status])).toEqual([6, 5, 4, 3, 2, 1].map((a) => [a, "failed"]));

  const hangHits = rx.at("/crash-hang");
  expect(hangHits).toHaveLength(2);
  expect(hangHits[1]!.raw).toBe(hangHits[0]!.raw);
  const hangLog = (await api("GET", `/webhooks/${hanging}/deliveries`)).json.data;
  expect(hangLog).toHaveLength(1);
  expect(hangLog[0]).toMatchObject({ attempt: 1, status: "succeeded", response_status: 200, event_id: event.id });
});

test("a worker stopped gracefully (SIGTERM) hands its in-flight attempt back at once instead of holding it for the lease", async () => {
  const { key, accountId } = await svc.newKey();
  const api = client(svc.baseUrl, key);
  let first = true;
  const id = (
    await api("POST", "/webhooks", {
      url: rx.url("/graceful", async () => {
        if (first) {
          first = false;
          await Bun.sleep(30_000);
        }
        return new Response("ok");
      }),
    })
  ).json.id;
  const event = await emit(svc.sql, accountId, "test", "job.failed", { id: "graceful", object: "job" });
  await rx.waitFor(() => rx.at("/graceful").length === 1, 30_000, "the held attempt");
  const stoppedAt = Date.now();
  for (const pid of workerPids()) process.kill(pid, "SIGTERM");
  await rx.waitFor(() => rx.at("/graceful").length === 2, 30_000, "the handed-back attempt");
  expect(Date.now() - stoppedAt).toBeLessThan(leaseS * 1000);
  const log = await until(
    () => api("GET", `/webhooks/${id}/deliveries`).then((r) => r.json.data as any[]),
    (l) => l[0]?.status === "succeeded",
    10_000,
    "the attempt recorded",
  );
  expect(log).toHaveLength(1);
  expect(log[0]).toMatchObject({ attempt: 1, status: "succeeded", event_id: event.id });
});
