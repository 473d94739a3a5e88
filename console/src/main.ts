// The console's shell: sign-in, the header (sandbox mark, theme, request budget), the
// navigation between views (hash routes) and sign-out. Each view is built once and kept.
import "./styles.css";
import { call, describe, rate, saveKey, savedKey, ApiProblem } from "./api";
import { h, replace, field } from "./dom";
import { runView } from "./views/run";
import { jobsView } from "./views/jobs";
import { usageView } from "./views/usage";
import { webhooksView } from "./views/webhooks";
import { accountView, errorsView } from "./views/account";
import type { Session, View } from "./view";

const app = document.getElementById("app")!;
const themeKey = "docproc.console.theme";

function applyTheme(theme: string) {
  document.documentElement.dataset.theme = theme;
  localStorage.setItem(themeKey, theme);
}
applyTheme(localStorage.getItem(themeKey) ?? "system");

function themeSelect() {
  const select = h(
    "select",
    { onchange: (e: Event) => applyTheme((e.target as HTMLSelectElement).value) },
    ["system", "light", "dark"].map((t) => h("option", { value: t }, t[0]!.toUpperCase() + t.slice(1))),
  );
  select.value = document.documentElement.dataset.theme ?? "system";
  return field("Theme", select);
}

function signInPage(message?: string) {
  const key = h("input", {
    type: "password",
    name: "key",
    autocomplete: "off",
    spellcheck: "false",
    required: true,
    placeholder: "svk_test_…",
  });
  const error = h("p", { class: "error", role: "alert" }, message ?? "");
  error.hidden = !message;
  const button = h("button", { type: "submit", class: "primary" }, "Sign in");
  const form = h(
    "form",
    {
      class: "card signin",
      onsubmit: async (e: Event) => {
        e.preventDefault();
        button.disabled = true;
        error.hidden = true;
        try {
          const account = await call("GET", "/account", { key: key.value.trim() });
          saveKey(key.value.trim());
          await start(account);
        } catch (err) {
          error.textContent = describe(err);
          error.hidden = false;
          key.focus();
        } finally {
          button.disabled = false;
        }
      },
    },
    h("h1", {}, "Document processing console"),
    h(
      "p",
      {},
      "Sign in with an API key. It is kept in this tab only (sessionStorage) and sent as a Bearer header; no cookies.",
    ),
    field("API key", key, "The first start of the service prints a sandbox key (svk_test_…)."),
    button,
    error,
    h(
      "p",
      { class: "muted" },
      h("a", { href: "/docs" }, "API reference"),
      " · ",
      h("a", { href: "/api/v1/errors" }, "Error codes (JSON)"),
    ),
  );
  replace(
    app,
    h(
      "header",
      { class: "top" },
      h("span", { class: "brand" }, "docproc"),
      h("div", { class: "spacer" }),
      themeSelect(),
    ),
    h("main", { id: "main", tabindex: "-1" }, form),
  );
  key.focus();
}

const routes = ["run", "jobs", "usage", "webhooks", "account", "errors"] as const;
type Route = (typeof routes)[number];

async function start(account?: any) {
  replace(app, h("p", { class: "loading" }, "Loading…"));
  try {
    account ??= await call("GET", "/account");
    const catalogue = await call("GET", "/operations");
    shell({ account, catalogue });
  } catch (err) {
    if (err instanceof ApiProblem && err.status === 401) saveKey(null);
    signInPage(describe(err));
  }
}

function shell(session: Session) {
  const sandbox = session.account.key.mode === "test";
  const views = new Map<Route, View>();
  const make: Record<Route, () => View> = {
    run: () => runView(session),
    jobs: () => jobsView(session),
    usage: () => usageView(session),
    webhooks: () => webhooksView(session),
    account: () => accountView(session),
    errors: () => errorsView(),
  };
  const labels: Record<Route, string> = {
    run: "Run",
    jobs: "Jobs",
    usage: "Usage",
    webhooks: "Webhooks",
    account: "Account",
    errors: "Errors",
  };
  const links = routes.map((r) => h("a", { href: `#${r}` }, labels[r]));
  const budget = h("span", { class: "budget", title: "Requests left in this key's rate-limit bucket" });
  const showBudget = () => (budget.textContent = rate.limit ? `${rate.remaining}/${rate.limit} requests` : "");
  rate.listeners.add(showBudget);
  showBudget();
  const main = h("main", { id: "main", tabindex: "-1" });
  replace(
    app,
    h(
      "header",
      { class: "top" },
      h("span", { class: "brand" }, "docproc"),
      sandbox
        ? h("span", { class: "badge sandbox", role: "note" }, "Sandbox mode: test key, nothing is billed")
        : h("span", { class: "badge live" }, "Live mode"),
      h("div", { class: "spacer" }),
      budget,
      themeSelect(),
      h(
        "button",
        {
          type: "button",
          onclick: () => {
            saveKey(null);
            location.hash = "";
            signInPage();
          },
        },
        "Sign out",
      ),
    ),
    h("nav", { "aria-label": "Console" }, links),
    main,
  );
  const route = () => {
    const r = (location.hash.slice(1).split("/")[0] || "run") as Route;
    const name = routes.includes(r) ? r : "run";
    if (!views.has(name)) views.set(name, make[name]());
    const view = views.get(name)!;
    for (const l of links)
      l.getAttribute("href") === `#${name}`
        ? l.setAttribute("aria-current", "page")
        : l.removeAttribute("aria-current");
    main.replaceChildren(view.element);
    document.title = `${view.title} · docproc console`;
    view.show?.();
  };
  // After a navigation, move focus to the new view's heading so keyboard and screen-reader
  // users land on it.
  window.onhashchange = () => {
    route();
    const heading = main.querySelector("h1");
    heading?.setAttribute("tabindex", "-1");
    heading?.focus();
  };
  route();
}

if (savedKey()) void start();
else signInPage();
