// Webhooks: endpoints listed, created (the secret shown once, with a copy button), edited,
// enabled/disabled, deleted, a test event sent, and each endpoint's delivery log. The event
// types come from the OpenAPI document, where the API declares them.
import { call, describe } from "../api";
import { field, h, replace, formatTime } from "../dom";
import type { Session, View } from "../view";

let eventTypesCache: string[] | null = null;
async function eventTypes(): Promise<string[]> {
  if (eventTypesCache) return eventTypesCache;
  const doc = await (await fetch("/api/v1/openapi.json", { credentials: "omit" })).json();
  const found = new Set<string>();
  const walk = (s: any) => {
    if (!s || typeof s !== "object") return;
    if (typeof s.const === "string") found.add(s.const);
    for (const v of Object.values(s)) walk(v);
  };
  walk(doc.paths["/webhooks"].post.requestBody.content["application/json"].schema.properties.events);
  return (eventTypesCache = [...found]);
}

function eventsFieldset(
  types: string[],
  selected: string[],
  legend = "Events",
): { element: HTMLFieldSetElement; read(): string[] } {
  const boxes = types.map((t) =>
    h("input", { type: "checkbox", name: "events", value: t, checked: selected.includes(t) }),
  );
  const element = h(
    "fieldset",
    { class: "events" },
    h("legend", {}, `${legend} (none ticked = all)`),
    boxes.map((b) => h("label", { class: "check" }, b, ` ${b.value}`)),
  );
  return { element, read: () => boxes.filter((b) => b.checked).map((b) => b.value) };
}

function deliveriesTable(rows: any[]): HTMLElement {
  if (rows.length === 0) return h("p", {}, "No deliveries yet.");
  return h(
    "table",
    { class: "table deliveries" },
    h("caption", {}, "Delivery log, newest first"),
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ["When", "Event", "Status", "Attempt", "Response", "Latency", "Error"].map((c) => h("th", { scope: "col" }, c)),
      ),
    ),
    h(
      "tbody",
      {},
      rows.map((d) =>
        h(
          "tr",
          {},
          h("td", { "data-label": "When" }, formatTime(d.attempted_at ?? d.created_at)),
          h("td", { "data-label": "Event" }, d.event_type),
          h("td", { "data-label": "Status" }, h("span", { class: `state ${d.status}` }, d.status)),
          h("td", { "data-label": "Attempt" }, `${d.attempt} of 6`),
          h("td", { "data-label": "Response" }, d.response_status === null ? "–" : String(d.response_status)),
          h("td", { "data-label": "Latency" }, d.duration_ms === null ? "–" : `${d.duration_ms} ms`),
          h(
            "td",
            { "data-label": "Error" },
            d.error ?? (d.next_attempt_at ? `next try ${formatTime(d.next_attempt_at)}` : "–"),
          ),
        ),
      ),
    ),
  );
}

export function webhooksView(_session: Session): View {
  const list = h("div", { class: "endpoints", "aria-live": "polite" });
  const createSlot = h("div");
  const secretSlot = h("div");

  async function load() {
    try {
      const [types, page] = await Promise.all([eventTypes(), call("GET", "/webhooks")]);
      if (!createSlot.firstChild) createSlot.append(createForm(types));
      replace(
        list,
        page.data.length ? page.data.map((ep: any) => endpointCard(ep, types)) : h("p", {}, "No endpoints yet."),
      );
    } catch (err) {
      replace(list, h("p", { class: "error", role: "alert" }, describe(err)));
    }
  }

  function createForm(types: string[]) {
    const url = h("input", {
      type: "url",
      name: "url",
      required: true,
      placeholder: "https://example.com/hooks",
      maxlength: 2048,
    });
    const description = h("input", { type: "text", name: "description", maxlength: 255 });
    const events = eventsFieldset(types, []);
    const error = h("p", { class: "error", role: "alert", hidden: true });
    return h(
      "form",
      {
        class: "card",
        "aria-label": "Add an endpoint",
        onsubmit: async (e: Event) => {
          e.preventDefault();
          error.hidden = true;
          try {
            const ep = await call("POST", "/webhooks", {
              json: { url: url.value, description: description.value || null, events: events.read() },
            });
            url.value = "";
            description.value = "";
            showSecret(ep);
            await load();
          } catch (err) {
            error.textContent = describe(err);
            error.hidden = false;
          }
        },
      },
      h("h2", {}, "Add an endpoint"),
      field("Endpoint URL", url, "http is allowed with sandbox keys; live keys need https."),
      field("Description", description),
      events.element,
      h("button", { type: "submit", class: "primary" }, "Add endpoint"),
      error,
    );
  }

  function showSecret(ep: any) {
    const secret = h("input", { type: "text", readonly: true, value: ep.secret, class: "mono" });
    const copied = h("span", { role: "status", class: "muted" });
    const copy = h(
      "button",
      {
        type: "button",
        onclick: async () => {
          try {
            await navigator.clipboard.writeText(ep.secret);
            copied.textContent = "Copied.";
          } catch {
            secret.select();
            copied.textContent = "Select and copy it (the clipboard is not available here).";
          }
        },
      },
      "Copy secret",
    );
    replace(
      secretSlot,
      h(
        "section",
        { class: "card secret", "aria-label": "New endpoint secret" },
        h("h2", { tabindex: "-1" }, "Signing secret"),
        h("p", {}, `The secret of ${ep.url}. It is shown only now: store it to verify Service-Signature.`),
        field("Signing secret", secret),
        h(
          "div",
          { class: "actions" },
          copy,
          copied,
          h("button", { type: "button", onclick: () => replace(secretSlot) }, "Done"),
        ),
      ),
    );
    (secretSlot.querySelector("h2") as HTMLElement).focus();
  }

  function endpointCard(ep: any, types: string[]) {
    const log = h("div", { class: "log" });
    const note = h("p", { role: "status", class: "muted" });
    const editSlot = h("div");
    const act = (fn: () => Promise<unknown>) => async () => {
      try {
        await fn();
      } catch (err) {
        note.textContent = describe(err);
        note.className = "error";
      }
    };
    const showLog = act(async () =>
      replace(
        log,
        deliveriesTable((await call("GET", `/webhooks/${ep.id}/deliveries`, { query: { limit: 20 } })).data),
      ),
    );
    const card = h(
      "article",
      { class: "card endpoint", "aria-label": `Endpoint ${ep.url}` },
      h("h3", { class: "mono" }, ep.url),
      h(
        "p",
        {},
        ep.enabled
          ? h("span", { class: "state succeeded" }, "enabled")
          : h("span", { class: "state failed" }, "disabled"),
        ep.disabled_reason ? ` · ${ep.disabled_reason}` : "",
        ep.description ? ` · ${ep.description}` : "",
      ),
      h(
        "p",
        { class: "muted" },
        `Events: ${ep.events.length ? ep.events.join(", ") : "all"} · created ${formatTime(ep.created_at)}`,
      ),
      h(
        "div",
        { class: "actions" },
        h(
          "button",
          {
            type: "button",
            onclick: act(async () => {
              note.className = "muted";
              note.textContent = "Sending…";
              try {
                await call("POST", `/webhooks/${ep.id}/test`);
                note.textContent = "Test event delivered.";
              } catch (err) {
                note.textContent = `Test event not accepted: ${describe(err)}`;
                note.className = "error";
              }
              await showLog();
            }),
          },
          "Send test event",
        ),
        h("button", { type: "button", onclick: showLog }, "Delivery log"),
        h("button", { type: "button", onclick: () => replace(editSlot, editForm(ep, types)) }, "Edit"),
        h(
          "button",
          {
            type: "button",
            onclick: act(async () => {
              await call("PATCH", `/webhooks/${ep.id}`, { json: { enabled: !ep.enabled } });
              await load();
            }),
          },
          ep.enabled ? "Disable" : "Enable",
        ),
        h(
          "button",
          {
            type: "button",
            class: "danger",
            onclick: act(async () => {
              if (!confirm(`Delete the endpoint ${ep.url}?`)) return;
              await call("DELETE", `/webhooks/${ep.id}`);
              await load();
            }),
          },
          "Delete",
        ),
      ),
      note,
      editSlot,
      log,
    );
    return card;
  }

  function editForm(ep: any, types: string[]) {
    const url = h("input", { type: "url", required: true, value: ep.url, maxlength: 2048 });
    const description = h("input", { type: "text", value: ep.description ?? "", maxlength: 255 });
    const events = eventsFieldset(types, ep.events);
    const error = h("p", { class: "error", role: "alert", hidden: true });
    return h(
      "form",
      {
        class: "edit",
        "aria-label": `Edit ${ep.url}`,
        onsubmit: async (e: Event) => {
          e.preventDefault();
          try {
            await call("PATCH", `/webhooks/${ep.id}`, {
              json: { url: url.value, description: description.value || null, events: events.read() },
            });
            await load();
          } catch (err) {
            error.textContent = describe(err);
            error.hidden = false;
          }
        },
      },
      field("Endpoint URL", url),
      field("Description", description),
      events.element,
      h("button", { type: "submit", class: "primary" }, "Save"),
      error,
    );
  }

  return {
    title: "Webhooks",
    element: h(
      "div",
      { class: "view" },
      h("h1", {}, "Webhooks"),
      secretSlot,
      createSlot,
      h("section", { "aria-label": "Endpoints" }, h("h2", {}, "Endpoints"), list),
    ),
    show: () => void load(),
  };
}
