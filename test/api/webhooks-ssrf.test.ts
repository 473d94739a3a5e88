// Outbound safety without WEBHOOK_ALLOW_PRIVATE_TARGETS: webhook URLs that reach loopback,
// private, link-local or other non-public addresses are refused at create, at update, and
// again at delivery time (the address actually connected to is checked).
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { client, expectEnvelope } from "../support/service";
import { useService } from "../support/use-service";
import { emit, startReceiver, until } from "../support/webhook-receiver";

setDefaultTimeout(60_000);

const svc = useService({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "0", WEBHOOK_RETRY_DELAYS_S: "1,1,1,1,1" } });
const rx = startReceiver();

afterAll(async () => {
  rx.stop();
});

async function account() {
  const k = await svc.newKey();
  return { ...k, api: client(svc.baseUrl, k.key) };
}

// A public address literal: accepted without DNS; no test ever emits an event to it.
const publicUrl = "http://93.184.216.34/hook";

const refused: [string, string][] = [
  ["http://127.0.0.1/hook", "loopback"],
  ["http://10.0.0.1/hook", "private"],
  ["http://169.254.169.254/latest/meta-data/", "link-local"],
  ["http://localhost/hook", "localhost resolves to"],
  [`http://localhost:${rx.server.port}/hook`, "loopback"],
  ["http://[::1]/hook", "loopback"],
  ["http://[::ffff:127.0.0.1]/hook", "IPv4-mapped"],
  ["http://0.0.0.0/hook", "unspecified"],
  ["http://2130706433/hook", "loopback"], // 127.0.0.1 as one number
  ["http://0x7f.1/hook", "loopback"],
  ["http://192.168.1.10/hook", "private"],
  ["http://172.16.5.4/hook", "private"],
  ["http://100.64.0.1/hook", "carrier-grade NAT"],
  ["http://[fd00::1]/hook", "unique-local"],
  ["http://224.0.0.1/hook", "multicast"],
];

describe("webhook URLs that reach non-public addresses", () => {
  for (const [url, why] of refused) {
    test(`${url} is refused at create (422 validation_error, param url)`, async () => {
      const { api } = await account();
      const e = expectEnvelope(await api("POST", "/webhooks", { url }), 422, "validation_error");
      expect(e.param).toBe("url");
      expect(e.message).toContain(why);
      expect((await api("GET", "/webhooks")).json.data).toEqual([]);
    });
  }

  test("a public address is accepted", async () => {
    const { api } = await account();
    const r = await api("POST", "/webhooks", { url: publicUrl });
    expect(r.status).toBe(201);
  });

  test("127.0.0.1, 10.0.0.1, 169.254.169.254 and localhost are refused at update, and the url is left unchanged", async () => {
    const { api } = await account();
    const id = (await api("POST", "/webhooks", { url: publicUrl })).json.id;
    for (const url of [
      "http://127.0.0.1/x",
      "http://10.0.0.1/x",
      "http://169.254.169.254/x",
      `http://localhost:${rx.server.port}/x`,
    ]) {
      const e = expectEnvelope(await api("PATCH", `/webhooks/${id}`, { url }), 422, "validation_error");
      expect(e.param).toBe("url");
    }
    expect((await api("GET", `/webhooks/${id}`)).json.url).toBe(publicUrl);
  });

  test("at delivery time the target is checked again: an endpoint whose host now reaches a private address gets nothing", async () => {
    const { api, accountId } = await account();
    const id = (await api("POST", "/webhooks", { url: publicUrl })).json.id;
    // As if its DNS had changed after registration (rebinding): the stored host now resolves to loopback.
    await svc.sql`UPDATE webhook_endpoints SET url = ${`http://localhost:${rx.server.port}/rebound`} WHERE id = ${id}`;
    await emit(svc.sql, accountId, "test", "job.succeeded", { id: "j", object: "job" });
    const log = await until(
      () => api("GET", `/webhooks/${id}/deliveries`).then((r) => r.json.data as any[]),
      (l) => l.some((d) => d.status === "failed"),
      20_000,
      "a refused attempt",
    );
    const failed = log.find((d) => d.status === "failed");
    expect(failed).toMatchObject({ attempt: 1, response_status: null });
    expect(failed.error).toContain("localhost resolves to");
    const t = expectEnvelope(await api("POST", `/webhooks/${id}/test`), 502, "webhook_delivery_failed");
    expect(t.delivery.error).toContain("public internet");
    await Bun.sleep(300);
    expect(rx.hits).toHaveLength(0);
  });
});
