// GET /readyz (an extension, outside /api/v1, no auth): 200 when Postgres and the blob store
// both answer, 503 naming the one that does not; GET /healthz stays the contract's database-only
// check, so an unreachable object store makes a node unready but not unhealthy.
import { describe, expect, test } from "bun:test";
import { freePort } from "../support/service";
import { useService } from "../support/use-service";

const ready = useService();
const closedPort = await freePort();
const storeDown = useService({
  env: {
    S3_ENDPOINT: `http://127.0.0.1:${closedPort}`,
    S3_BUCKET: "nowhere",
    S3_ACCESS_KEY_ID: "GK0",
    S3_SECRET_ACCESS_KEY: "x",
  },
});

describe("GET /readyz", () => {
  test("answers 200 with database and store ok when both are reachable", async () => {
    const r = await fetch(`${ready.origin}/readyz`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ ok: true, database: "ok", store: "ok" });
  });

  test("answers 503 naming the store when the object store is unreachable, while /healthz answers 200", async () => {
    const r = await fetch(`${storeDown.origin}/readyz`);
    expect(r.status).toBe(503);
    expect(await r.json()).toEqual({ ok: false, database: "ok", store: "unreachable" });
    const h = await fetch(`${storeDown.origin}/healthz`);
    expect(h.status).toBe(200);
  });
});
