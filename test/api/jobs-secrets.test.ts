// Passwords given to protect and unlock are secrets: no job representation echoes them, and
// the database keeps them only while the job can still run.
import { expect, setDefaultTimeout, test } from "bun:test";
import { hasCorpus } from "../support/service";
import { useService } from "../support/use-service";
import { api, finishedJob, uploadOk } from "../support/jobs";

setDefaultTimeout(60_000);
const svc = useService();

test.skipIf(!hasCorpus)(
  "protect and unlock passwords are redacted in responses, replays and events, and erased once the job ends",
  async () => {
    const { key } = await svc.newKey();
    const file = await uploadOk(svc, key, "latex-outline-4-pages.pdf");
    const call = api(svc, key);
    const created = await call(
      "POST",
      "/jobs",
      {
        operation: "protect",
        file_id: file.id,
        options: { user_password: "s3cret-user", owner_password: "s3cret-owner" },
      },
      { "idempotency-key": "protect-1" },
    );
    expect(created.status).toBe(202);
    expect(created.json.options).toEqual({ user_password: "[redacted]", owner_password: "[redacted]" });
    const replay = await call(
      "POST",
      "/jobs",
      {
        operation: "protect",
        file_id: file.id,
        options: { user_password: "s3cret-user", owner_password: "s3cret-owner" },
      },
      { "idempotency-key": "protect-1" },
    );
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.text).not.toContain("s3cret");
    const done = await finishedJob(svc, key, created.json.id);
    expect(done.status).toBe("succeeded");
    expect(JSON.stringify(done)).not.toContain("s3cret");
    const [row] = await svc.sql`SELECT options::text AS o FROM jobs WHERE id = ${created.json.id}`;
    expect(row!.o).not.toContain("s3cret");
    const events = await svc.sql`SELECT payload::text AS p FROM events`;
    expect(events.length).toBeGreaterThan(0);
    for (const e of events) expect(e.p).not.toContain("s3cret");
    const idem = await svc.sql`SELECT response_body::text AS b FROM idempotency_records`;
    for (const r of idem) expect(r.b).not.toContain("s3cret");
  },
);
