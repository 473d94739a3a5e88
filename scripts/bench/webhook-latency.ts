// Benchmark: webhook delivery latency, from an event's commit to the first byte at the receiver
// (issue 4, closing note).
//
//   bun scripts/bench/webhook-latency.ts [--events 200] [--burst 100] [--workers 1]
//                                        [--source events|jobs] [--file acroform-printed-wikipedia.pdf]
//                                        [--out bench/out/webhook-latency.json]
//
// Starts the real service (supervisor, API, worker processes running the dispatcher) on a fresh
// database of the local Postgres (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test),
// registers a receiver (a raw TCP server on 127.0.0.1 that timestamps the first byte of each
// request), and measures:
//   --source events (default): events written to the outbox one at a time, as the jobs module
//     does (recordEvent, autocommit); latency = first byte at the receiver - commit acknowledged
//     to the writer (also reported from the moment the INSERT was sent, an upper bound).
//     Then a burst: --burst events committed in one transaction, latency of each and of the last.
//   --source jobs: real rotate jobs on a corpus PDF (needs the native engine); latency = first
//     byte - the job.succeeded event's created_at (stamped inside the completing transaction).
import { createServer, type Socket } from "node:net";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { cpus } from "node:os";
import { client, corpusDir, root, startService } from "../../test/support/service";
import { recordEvent } from "../../src/events/record";
import type { Sql } from "../../src/db/client";
import { createKey } from "../../src/admin/commands";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    events: { type: "string", default: "200" },
    burst: { type: "string", default: "100" },
    workers: { type: "string", default: "1" },
    source: { type: "string", default: "events" },
    file: { type: "string", default: "acroform-printed-wikipedia.pdf" },
    out: { type: "string", default: "bench/out/webhook-latency.json" },
  },
  strict: true,
});
const n = Number(values.events);
const burst = Number(values.burst);
const outFile = resolve(root, values.out!);
const now = () => performance.timeOrigin + performance.now();
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

function stats(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const p = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil((q / 100) * s.length) - 1))]!;
  return {
    n: s.length,
    p50_ms: round(p(50)),
    p95_ms: round(p(95)),
    p99_ms: round(p(99)),
    min_ms: round(s[0]!),
    max_ms: round(s[s.length - 1]!),
  };
}

// The receiver: records when the first byte of each request arrived, answers 200 once the
// whole request is in, and hands (event, first byte time) to whoever waits for that event.
const arrivals = new Map<string, { firstByte: number; event: any }>();
const waiters = new Map<string, (a: { firstByte: number; event: any }) => void>();
const receiver = createServer((sock: Socket) => {
  let first = 0;
  let buf = Buffer.alloc(0);
  sock.on("data", (chunk: Buffer) => {
    if (!first) first = now();
    buf = Buffer.concat([buf, chunk]);
    const end = buf.indexOf("\r\n\r\n");
    if (end < 0) return;
    const len = Number(/content-length:\s*(\d+)/i.exec(buf.subarray(0, end).toString("latin1"))?.[1] ?? 0);
    if (buf.length < end + 4 + len) return;
    sock.end("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    const event = JSON.parse(buf.subarray(end + 4, end + 4 + len).toString("utf8"));
    const a = { firstByte: first, event };
    for (const key of [event.id, `job:${event.data?.object?.id}`]) {
      arrivals.set(key, a);
      waiters.get(key)?.(a);
    }
  });
  sock.on("error", () => {});
});
await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/bench`;

function arrival(key: string, timeoutMs = 30_000): Promise<{ firstByte: number; event: any }> {
  const got = arrivals.get(key);
  if (got) return Promise.resolve(got);
  return new Promise((res, rej) => {
    const t = setTimeout(() => rej(new Error(`no delivery of ${key} within ${timeoutMs} ms`)), timeoutMs);
    waiters.set(key, (a) => {
      clearTimeout(t);
      waiters.delete(key);
      res(a);
    });
  });
}

const svc = await startService({ workers: Number(values.workers), env: { LOG_LEVEL: "warn" } });
const result: Record<string, unknown> = {
  benchmark: "webhook-latency",
  measured_at: new Date().toISOString(),
  machine: { cpus: cpus().length, model: cpus()[0]?.model },
  workers: Number(values.workers),
  source: values.source,
};
try {
  const { key, accountId } = await svc.newKey({ mode: "test" });
  const api = client(svc.baseUrl, key);
  const ep = await api("POST", "/webhooks", { url: receiverUrl });
  if (ep.status !== 201) throw new Error(`could not register the receiver: ${ep.status} ${ep.text}`);

  if (values.source === "events") {
    const sql = svc.sql as unknown as Sql;
    const emit = (i: number) =>
      recordEvent(sql, accountId, "test", "job.succeeded", {
        id: `bench-${i}`,
        object: "job",
        operation: "rotate",
        status: "succeeded",
      });
    for (let i = 0; i < 10; i++) await arrival((await emit(-1 - i)).id); // warm-up
    const fromCommit: number[] = [];
    const fromSend: number[] = [];
    for (let i = 0; i < n; i++) {
      const sent = now();
      const e = await emit(i);
      const committed = now();
      const a = await arrival(e.id);
      fromCommit.push(a.firstByte - committed);
      fromSend.push(a.firstByte - sent);
      await Bun.sleep(Math.random() * 20); // do not run in lockstep with anything periodic
    }
    console.error(`sequential: ${n} events done`);
    result.sequential = { commit_to_first_byte: stats(fromCommit), insert_sent_to_first_byte: stats(fromSend) };

    const ids: string[] = [];
    await svc.sql.begin(async (tx) => {
      for (let i = 0; i < burst; i++)
        ids.push(
          (
            await recordEvent(tx as unknown as Sql, accountId, "test", "job.succeeded", {
              id: `burst-${i}`,
              object: "job",
            })
          ).id,
        );
    });
    const committed = now();
    const got = await Promise.all(ids.map((id) => arrival(id, 60_000)));
    const lat = got.map((a) => a.firstByte - committed);
    result.burst = { events: burst, commit_to_first_byte: stats(lat), all_delivered_ms: round(Math.max(...lat)) };
  } else if (values.source === "jobs") {
    const form = new FormData();
    const path = join(corpusDir, "files", values.file!);
    form.append("file", new Blob([readFileSync(path)], { type: "application/pdf" }), values.file!);
    const up = await api("POST", "/files", form);
    if (up.status !== 201) throw new Error(`upload failed: ${up.status} ${up.text}`);
    await api("PATCH", `/webhooks/${ep.json.id}`, { events: ["job.succeeded", "job.failed"] });
    const lat: number[] = [];
    for (let i = 0; i < n; i++) {
      // A fresh key of the same account per job: the sandbox token bucket allows 30 requests a minute.
      const jobApi = client(svc.baseUrl, (await createKey(svc.sql as never, accountId, "test")).key);
      const j = await jobApi("POST", "/jobs", { operation: "rotate", file_id: up.json.id, options: { degrees: 90 } });
      if (j.status !== 202) throw new Error(`POST /jobs answered ${j.status} ${j.text}`);
      const a = await arrival(`job:${j.json.id}`, 120_000);
      if (a.event.type !== "job.succeeded") throw new Error(`job failed: ${JSON.stringify(a.event.data.object.error)}`);
      lat.push(a.firstByte - Date.parse(a.event.created_at));
    }
    result.jobs = {
      operation: "rotate",
      file: values.file,
      job_success_to_first_byte: stats(lat),
      note: "event created_at has millisecond resolution",
    };
  } else throw new Error(`--source must be events or jobs`);

  const log = await api("GET", `/webhooks/${ep.json.id}/deliveries?limit=100`);
  result.failed_attempts_in_last_100 = (log.json.data as any[]).filter((d) => d.status !== "succeeded").length;
  mkdirSync(dirname(outFile), { recursive: true });
  writeFileSync(outFile, JSON.stringify(result, null, 2) + "\n");
  console.log(JSON.stringify(result, null, 2));
} catch (e) {
  console.error(svc.logs().slice(-4000));
  throw e;
} finally {
  receiver.close();
  await svc.stop();
}
