// Account: plan, limits and the key in use (last four characters only), with links to the
// API reference (/docs) and the error reference (GET /errors, shown as a table here).
import { describe } from "../api";
import { h, replace, formatTime, formatBytes } from "../dom";
import type { Session, View } from "../view";

export function accountView(session: Session): View {
  const a = session.account;
  const rows: [string, string][] = [
    ["Email", `${a.email}${a.email_verified ? "" : " (not verified)"}`],
    [
      "Plan",
      `${a.plan.name} · ${a.plan.price_eur_per_month} EUR/month · ${a.plan.included_credits_per_month} credits included`,
    ],
    ["Spending cap", a.spending_cap_eur === null ? "none" : `${a.spending_cap_eur} EUR`],
    ["Key in use", `…${a.key.last4} (${a.key.mode === "test" ? "sandbox" : "live"})`],
    ["Key scopes", a.key.scopes.join(", ")],
    ["Key created", formatTime(a.key.created_at)],
    ["Key expires", a.key.expires_at ? formatTime(a.key.expires_at) : "never"],
    ["Requests per minute", String(a.limits.requests_per_minute)],
    ["Jobs queued or running at once", String(a.limits.concurrent_jobs)],
    ["Pages per job", String(a.limits.pages_per_job)],
    ["Largest upload", formatBytes(a.limits.max_upload_bytes)],
    ["Billed", a.limits.billed ? "yes" : "no (sandbox)"],
  ];
  const element = h(
    "div",
    { class: "view" },
    h(
      "section",
      { class: "card" },
      h("h1", {}, "Account"),
      h(
        "dl",
        { class: "facts" },
        rows.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]),
      ),
      h("h2", {}, "Reference"),
      h(
        "ul",
        {},
        h("li", {}, h("a", { href: "/docs" }, "API reference"), " (OpenAPI, offline)"),
        h("li", {}, h("a", { href: "#errors" }, "Error reference")),
        h("li", {}, h("a", { href: "/api/v1/openapi.json" }, "openapi.json")),
      ),
    ),
  );
  return { title: "Account", element };
}

export function errorsView(): View {
  const body = h("div");
  const element = h(
    "div",
    { class: "view" },
    h(
      "section",
      { class: "card" },
      h("h1", {}, "Error reference"),
      h(
        "p",
        {},
        "Every error the API answers comes in one envelope: ",
        h("code", {}, '{"error": {type, code, message, doc_url, request_id, param}}'),
        ".",
      ),
      body,
    ),
  );
  return {
    title: "Errors",
    element,
    async show() {
      if (body.firstChild) return;
      try {
        const list = await (await fetch("/api/v1/errors", { credentials: "omit" })).json();
        replace(
          body,
          h(
            "table",
            { class: "table" },
            h("caption", { class: "sr-only" }, "Error codes"),
            h(
              "thead",
              {},
              h(
                "tr",
                {},
                ["Code", "HTTP", "Type", "Meaning"].map((c) => h("th", { scope: "col" }, c)),
              ),
            ),
            h(
              "tbody",
              {},
              list.data.map((e: any) =>
                h(
                  "tr",
                  { id: e.code },
                  h(
                    "td",
                    { "data-label": "Code" },
                    h("code", {}, e.code),
                    e.origin === "extension" ? " (extension)" : "",
                  ),
                  h("td", { "data-label": "HTTP" }, String(e.status)),
                  h("td", { "data-label": "Type" }, e.type),
                  h("td", { "data-label": "Meaning" }, e.meaning),
                ),
              ),
            ),
          ),
        );
      } catch (err) {
        replace(body, h("p", { class: "error", role: "alert" }, describe(err)));
      }
    },
  };
}
