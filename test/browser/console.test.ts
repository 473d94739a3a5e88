// The web console in a real browser (Debian's Chromium driven by playwright-core) against the
// real service: sign in, run rotate to 100% and download the PDF, OCR with its text and page
// picture, a webhook's test delivery in the log, a wrong key's error, jobs, usage, account,
// the offline API reference; desktop and 360 px, light and dark. Screenshots of every step go
// to test/artifacts/console/ (not committed).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { corpusDir, root, startService, type Service } from "../support/service";
import { startReceiver, verifyWithStripe } from "../support/webhook-receiver";
import { buildConsole } from "../../scripts/build-console";
import { makePdf } from "../support/make-pdf";

const axePath = join(root, "node_modules/axe-core/axe.min.js");
const chromiumPath = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const artifacts = join(root, "test/artifacts/console");
const rotatePdf = join(corpusDir, "files/scanned-mixed-3-pages.pdf");
const ocrPdf = join(corpusDir, "ocr/ocrmypdf-linn-brochure-scan.pdf");
const haveCorpus = existsSync(rotatePdf) && existsSync(ocrPdf);
if (!haveCorpus)
  console.log(`console browser test: corpus not found at ${corpusDir}; using a PDF and an image the test makes`);

let service: Service;
let browser: Browser;
const receiver = startReceiver();
// Requests to another origin, by page kind; the CSP must stop every one of them.
const offOrigin: { url: string; page: string; blocked: boolean }[] = [];
// Every 429 the console received: its polling must stay within the key's budget.
const tooMany: string[] = [];

async function newPage(
  opts: { width?: number; dark?: boolean } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: { width: opts.width ?? 1280, height: 900 },
    colorScheme: opts.dark ? "dark" : "light",
    acceptDownloads: true,
  });
  const page = await context.newPage();
  const outside = (u: string) => !u.startsWith(service.origin) && !u.startsWith("blob:") && !u.startsWith("data:");
  page.on(
    "requestfailed",
    (r) => outside(r.url()) && offOrigin.push({ url: r.url(), page: page.url(), blocked: true }),
  );
  page.on(
    "requestfinished",
    (r) => outside(r.url()) && offOrigin.push({ url: r.url(), page: page.url(), blocked: false }),
  );
  page.on("response", (r) => r.status() === 429 && tooMany.push(r.url()));
  return { context, page };
}

async function shot(page: Page, name: string, fullPage = true) {
  await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage });
}

async function signIn(page: Page, key: string) {
  await page.goto(`${service.origin}/console`);
  await page.getByLabel("API key", { exact: true }).fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Run an operation" }).waitFor();
}

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  await buildConsole();
  // Each job waits a little per page before it runs, so there is time to press Cancel.
  service = await startService({ workers: 1, env: { JOB_TEST_PAGE_DELAY_MS: "700" } });
  browser = await chromium.launch({ executablePath: chromiumPath });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  receiver.stop();
  await service?.stop();
});

describe("console", () => {
  test("the console and /docs are served with long-lived caching for hashed assets, and the API reference renders offline", async () => {
    const html = await fetch(`${service.origin}/console`);
    expect(html.status).toBe(200);
    expect(html.headers.get("cache-control")).toBe("no-cache");
    const script = (await html.text()).match(/src="(\/console\/assets\/main-[^"]+\.js)"/)![1]!;
    const asset = await fetch(service.origin + script);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("cache-control")).toContain("immutable");
    expect((await fetch(`${service.origin}/console/assets/..%2f..%2fpackage.json`)).status).toBe(404);

    const { context, page } = await newPage();
    await page.goto(`${service.origin}/docs`);
    await page
      .getByRole("heading", { name: /Document Processing API/ })
      .first()
      .waitFor({ timeout: 30_000 });
    expect(
      await page.getByText("Credits and pages per day and operation, this period (extension)").count(),
    ).toBeGreaterThan(0);
    await shot(page, "00-docs", false); // the whole reference is ~50,000 px tall
    await context.close();
  }, 60_000);

  test("a wrong key shows the API's error message", async () => {
    const { context, page } = await newPage();
    const wrong = "svk_test_" + "0".repeat(32);
    const api: any = await (
      await fetch(`${service.baseUrl}/account`, { headers: { authorization: `Bearer ${wrong}` } })
    ).json();
    await page.goto(`${service.origin}/console`);
    await page.getByLabel("API key", { exact: true }).fill(wrong);
    await page.getByRole("button", { name: "Sign in" }).click();
    const alert = page.getByRole("alert");
    await alert.filter({ hasText: api.error.message }).waitFor();
    expect(await alert.textContent()).toContain("invalid_api_key");
    await shot(page, "01-wrong-key");
    await context.close();
  }, 30_000);

  test("sign in, upload a PDF, run rotate: the progress bar reaches 100% and the downloaded PDF has every page", async () => {
    const { key } = await service.newKey({ mode: "test" });
    const { context, page } = await newPage();
    await signIn(page, key);
    await expect(page.getByText("Sandbox mode").isVisible()).resolves.toBe(true);
    await shot(page, "02-signed-in");

    const input = haveCorpus
      ? { name: "scanned-mixed-3-pages.pdf", buffer: readFileSync(rotatePdf), pages: 3 }
      : { name: "made.pdf", buffer: makePdf(3), pages: 3 };
    await page
      .getByLabel("File", { exact: true })
      .setInputFiles({ name: input.name, mimeType: "application/pdf", buffer: input.buffer });
    await page.getByLabel("Operation", { exact: true }).selectOption("rotate");
    await page.getByLabel("Degrees (required)", { exact: true }).selectOption({ label: "90" });
    await shot(page, "03-rotate-form");
    await page.getByRole("button", { name: "Run" }).click();

    const bar = page.getByRole("progressbar");
    await bar.waitFor();
    const seen = new Set<string>();
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const now = await bar.getAttribute("aria-valuenow");
      seen.add(now!);
      if (now === "100") break;
      await Bun.sleep(50);
    }
    expect(seen.has("100")).toBe(true);
    await page.getByRole("status").filter({ hasText: "succeeded" }).waitFor();
    await shot(page, "04-rotate-done");

    const downloading = page.waitForEvent("download");
    await page.getByRole("link", { name: "Download" }).click();
    const download = await downloading;
    const saved = join(artifacts, "rotated.pdf");
    await download.saveAs(saved);
    const npages = Bun.spawnSync(["qpdf", "--show-npages", saved]);
    expect(npages.stdout.toString().trim()).toBe(String(input.pages));
    const check = Bun.spawnSync(["qpdf", "--check", saved]);
    expect([0, 3]).toContain(check.exitCode); // 3 = warnings only
    const json = Bun.spawnSync(["qpdf", "--json", "--json-key=pages", saved]).stdout.toString();
    expect(JSON.parse(json).pages.length).toBe(input.pages);

    // Jobs: the list and the details of the job just run.
    await page.getByRole("link", { name: "Jobs" }).click();
    await page
      .getByRole("button", { name: /Details of the rotate job/ })
      .first()
      .click();
    await page.getByRole("heading", { name: "Job rotate" }).waitFor();
    expect(await page.locator("pre").first().textContent()).toContain('"degrees": 90');
    await shot(page, "05-jobs");
    await context.close();
  }, 120_000);

  test("a file dropped on the drop zone can be run, and Cancel stops the job (status cancelled)", async () => {
    const { key } = await service.newKey({ mode: "test" });
    const { context, page } = await newPage();
    await signIn(page, key);
    const bytes = [...makePdf(6)];
    const dt = await page.evaluateHandle((b) => {
      const d = new (globalThis as any).DataTransfer();
      d.items.add(new File([new Uint8Array(b)], "dropped.pdf", { type: "application/pdf" }));
      return d;
    }, bytes);
    await page.dispatchEvent(".drop", "drop", { dataTransfer: dt });
    await page.getByText("dropped.pdf", { exact: true }).waitFor();
    await page.getByLabel("Operation", { exact: true }).selectOption("rotate");
    await page.getByLabel("Degrees (required)", { exact: true }).selectOption({ label: "180" });
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByRole("button", { name: "Cancel" }).click();
    await page.getByRole("status").filter({ hasText: "cancelled" }).waitFor({ timeout: 30_000 });
    expect(await page.getByRole("button", { name: "Cancel" }).count()).toBe(0);
    expect(await page.getByRole("link", { name: "Download" }).count()).toBe(0);
    await shot(page, "05b-cancelled");
    await context.close();
  }, 60_000);

  test("run OCR and see the recognised text beside the page with its word boxes; usage plots the pages", async () => {
    const { key } = await service.newKey({ mode: "test" });
    const { context, page } = await newPage();
    await signIn(page, key);
    let file: { name: string; mimeType: string; buffer: Buffer };
    let expected: RegExp;
    if (haveCorpus) {
      file = { name: "linn-brochure-scan.pdf", mimeType: "application/pdf", buffer: readFileSync(ocrPdf) };
      expected = /Linn/i;
    } else {
      // Drawn by the browser itself: large black words on white.
      const png = await page.evaluate(async () => {
        const c = (globalThis as any).document.createElement("canvas");
        c.width = 1200;
        c.height = 400;
        const g = c.getContext("2d")!;
        g.fillStyle = "#fff";
        g.fillRect(0, 0, c.width, c.height);
        g.fillStyle = "#000";
        g.font = "bold 96px sans-serif";
        g.fillText("HELLO CONSOLE", 60, 240);
        const blob: Blob = await new Promise((r) => c.toBlob((b: Blob) => r(b), "image/png"));
        return [...new Uint8Array(await blob.arrayBuffer())];
      });
      file = { name: "made.png", mimeType: "image/png", buffer: Buffer.from(png) };
      expected = /HELLO/i;
    }
    await page.getByLabel("File", { exact: true }).setInputFiles(file);
    await page.getByLabel("Operation", { exact: true }).selectOption("ocr");
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByRole("status").filter({ hasText: "succeeded" }).waitFor({ timeout: 120_000 });
    const text = page.getByLabel("Text of page 1", { exact: true });
    await text.waitFor();
    expect(await text.textContent()).toMatch(expected);
    // The word boxes are drawn over the picture of the page.
    expect(await page.locator("svg.boxes rect").count()).toBeGreaterThan(1);
    await page
      .getByText("Drawing the page…")
      .waitFor({ state: "detached", timeout: 30_000 })
      .catch(() => {});
    expect(await page.getByText("could not be drawn").count()).toBe(0);
    await shot(page, "06-ocr");

    await page.getByRole("link", { name: "Usage" }).click();
    await page.getByText("Pages processed per day", { exact: true }).waitFor();
    expect(await page.locator(".chart canvas").count()).toBeGreaterThan(0);
    await shot(page, "07-usage");

    await page.getByRole("link", { name: "Account" }).click();
    const last4 = key.slice(-4);
    await page.getByText(`…${last4}`).waitFor();
    await shot(page, "08-account");

    // 360 px wide, light and dark: the same key in new tabs.
    for (const dark of [false, true]) {
      const small = await newPage({ width: 360, dark });
      await signIn(small.page, key);
      const scroll = await small.page.evaluate(
        () => (globalThis as any).document.documentElement.scrollWidth as number,
      );
      expect(scroll).toBeLessThanOrEqual(360);
      await shot(small.page, `09-run-360-${dark ? "dark" : "light"}`);
      await small.page.getByRole("link", { name: "Jobs" }).click();
      await small.page
        .getByRole("button", { name: /Details of the ocr job/ })
        .first()
        .waitFor();
      expect(
        await small.page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number),
      ).toBeLessThanOrEqual(360);
      await shot(small.page, `10-jobs-360-${dark ? "dark" : "light"}`);
      await small.context.close();
    }
    await context.close();
  }, 240_000);

  test("create a webhook to a local receiver: the secret is shown once, and the test delivery appears in the log", async () => {
    const { key } = await service.newKey({ mode: "test" });
    const { context, page } = await newPage({ dark: true });
    await signIn(page, key);
    await page.getByRole("link", { name: "Webhooks" }).click();
    const url = receiver.url("/console-hook", 200);
    await page.getByLabel("Endpoint URL", { exact: true }).fill(url);
    await page.getByLabel("Description", { exact: true }).fill("console test");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const secretBox = page.getByLabel("Signing secret", { exact: true });
    await secretBox.waitFor();
    const secret = await secretBox.inputValue();
    expect(secret).toStartWith("whsec_");
    await page.getByRole("button", { name: "Copy secret" }).waitFor();
    await shot(page, "11-webhook-created");

    await page.getByRole("button", { name: "Send test event" }).click();
    await page.getByText("Test event delivered.").waitFor({ timeout: 30_000 });
    const row = page.locator("table.deliveries tbody tr").first();
    await row.waitFor();
    const cells = await row.locator("td").allTextContents();
    expect(cells[1]).toBe("webhook.test");
    expect(cells[2]).toBe("succeeded");
    expect(cells[4]).toBe("200");
    expect(cells[5]).toMatch(/^\d+ ms$/);
    await shot(page, "12-webhook-delivery");

    const hit = receiver.at("/console-hook").find((h) => h.json?.type === "webhook.test")!;
    expect(hit).toBeDefined();
    const event = await verifyWithStripe(hit, secret);
    expect(event.type as string).toBe("webhook.test");

    await page.getByRole("button", { name: "Disable" }).click();
    await page.getByRole("button", { name: "Enable" }).waitFor();
    expect(await page.getByText("disabled", { exact: true }).count()).toBe(1);

    // Edit: subscribe to job.failed only.
    await page.getByRole("button", { name: "Edit" }).click();
    await page
      .getByRole("form", { name: /^Edit / })
      .getByLabel("job.failed")
      .check();
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText("Events: job.failed", { exact: false }).waitFor();
    await shot(page, "13-webhook-edited");

    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: "Delete" }).click();
    await page.getByText("No endpoints yet.").waitFor();
    const left = await fetch(`${service.baseUrl}/webhooks`, { headers: { authorization: `Bearer ${key}` } });
    expect(((await left.json()) as any).data).toEqual([]);
    await context.close();
  }, 90_000);

  test("accessible: keyboard sign-in, a visible focus ring, and no serious or critical axe-core (WCAG 2 A/AA) violation on any view, light and dark", async () => {
    const { key } = await service.newKey({ mode: "test" });
    for (const dark of [false, true]) {
      // axe is injected as a script, which the console's CSP forbids; this context bypasses it.
      const context = await browser.newContext({
        viewport: { width: 1280, height: 900 },
        colorScheme: dark ? "dark" : "light",
        bypassCSP: true,
      });
      const page = await context.newPage();
      page.on("response", (r) => r.status() === 429 && tooMany.push(r.url()));
      await page.goto(`${service.origin}/console`);
      await page.keyboard.type(key); // the API key field has the focus
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { name: "Run an operation" }).waitFor();
      await page.keyboard.press("Tab");
      const ring = await page.evaluate(() => {
        const el = (globalThis as any).document.activeElement;
        const st = (globalThis as any).getComputedStyle(el);
        return { tag: el.tagName as string, style: st.outlineStyle as string, width: st.outlineWidth as string };
      });
      expect(ring.tag).not.toBe("BODY");
      expect(ring.style).not.toBe("none");
      expect(ring.width).not.toBe("0px");
      for (const view of ["run", "jobs", "usage", "webhooks", "account", "errors"]) {
        await page.evaluate((v) => ((globalThis as any).location.hash = v), view);
        await page.locator("main h1").first().waitFor();
        await page.waitForLoadState("networkidle");
        await page.addScriptTag({ path: axePath });
        const result: { passes: number; violations: { id: string; impact: string; nodes: number; help: string }[] } =
          await page.evaluate(async () => {
            const r = await (globalThis as any).axe.run((globalThis as any).document, {
              runOnly: ["wcag2a", "wcag2aa"],
            });
            return {
              passes: r.passes.length,
              violations: r.violations.map((v: any) => ({
                id: v.id,
                impact: v.impact,
                nodes: v.nodes.length,
                help: v.help,
                targets: v.nodes.slice(0, 3).map((n: any) => n.target.join(" ")),
              })),
            };
          });
        if (process.env.CONSOLE_AXE_LOG)
          console.log(view, dark ? "dark" : "light", result.passes, JSON.stringify(result.violations));
        expect(result.passes).toBeGreaterThan(5); // axe really ran its rules
        const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
        expect({ view, dark, bad }).toEqual({ view, dark, bad: [] });
      }
      await context.close();
    }
  }, 120_000);

  test("works offline: the console asks nothing of another origin, and /docs's one attempt (Redoc's logo) is blocked by the CSP", () => {
    expect(offOrigin.filter((r) => !r.blocked)).toEqual([]);
    expect(offOrigin.filter((r) => r.page.includes("/console"))).toEqual([]);
  });

  test("the console's polling never tripped the sandbox key's rate limit (no 429 in any step above)", () => {
    expect(tooMany).toEqual([]);
  });
});
