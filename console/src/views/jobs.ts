// Jobs: the list (status filter, cursor paging, newest first) and one job's details: options
// (secrets come redacted from the API), timings, credits, result, error.
import { call, describe } from "../api";
import { field, h, replace, formatTime, seconds, formatBytes } from "../dom";
import { downloadLink, isFinal } from "./job-panel";
import type { Session, View } from "../view";

export function jobsView(_session: Session): View {
  const status = h(
    "select",
    { name: "status" },
    h("option", { value: "" }, "any"),
    ["queued", "running", "succeeded", "failed", "cancelled"].map((s) => h("option", { value: s }, s)),
  );
  const list = h("div", { class: "list", "aria-live": "polite" });
  const detail = h("section", { class: "card", "aria-label": "Job details", hidden: true });
  const prev = h("button", { type: "button", disabled: true }, "Newer");
  const next = h("button", { type: "button", disabled: true }, "Older");
  // cursors[i] = starting_after of page i (page 0 has none).
  let cursors: (string | undefined)[] = [undefined];
  let pageIndex = 0;

  async function load() {
    replace(list, h("p", { class: "muted" }, "Loading…"));
    try {
      const page = await call("GET", "/jobs", {
        query: { limit: 20, status: status.value || undefined, starting_after: cursors[pageIndex] },
      });
      prev.disabled = pageIndex === 0;
      next.disabled = !page.has_more;
      if (page.has_more) cursors[pageIndex + 1] = page.data[page.data.length - 1].id;
      if (page.data.length === 0) return replace(list, h("p", {}, "No jobs yet."));
      replace(
        list,
        h(
          "table",
          { class: "table" },
          h("caption", { class: "sr-only" }, "Jobs, newest first"),
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ["Created", "Operation", "Status", "Pages", ""].map((c) => h("th", { scope: "col" }, c)),
            ),
          ),
          h(
            "tbody",
            {},
            page.data.map((j: any) =>
              h(
                "tr",
                {},
                h("td", { "data-label": "Created" }, formatTime(j.created_at)),
                h("td", { "data-label": "Operation" }, j.operation),
                h("td", { "data-label": "Status" }, h("span", { class: `state ${j.status}` }, j.status)),
                h("td", { "data-label": "Pages" }, `${j.progress.pages_done}/${j.progress.pages_total}`),
                h(
                  "td",
                  {},
                  h(
                    "button",
                    {
                      type: "button",
                      onclick: () => showJob(j.id),
                      "aria-label": `Details of the ${j.operation} job created ${formatTime(j.created_at)}`,
                    },
                    "Details",
                  ),
                ),
              ),
            ),
          ),
        ),
      );
    } catch (err) {
      replace(list, h("p", { class: "error", role: "alert" }, describe(err)));
    }
  }

  async function showJob(id: string) {
    detail.hidden = false;
    replace(detail, h("p", { class: "muted" }, "Loading…"));
    try {
      const j = await call("GET", `/jobs/${id}`);
      const rows: [string, unknown][] = [
        ["Id", j.id],
        ["Operation", `${j.operation} (${j.kind})`],
        ["Status", j.status],
        ["Progress", `${j.progress.pages_done}/${j.progress.pages_total} pages (${j.progress.percent}%)`],
        ["Inputs", j.file_id ?? (j.file_ids ?? []).join(", ")],
        ["Created", formatTime(j.created_at)],
        ["Started", formatTime(j.started_at)],
        ["Finished", formatTime(j.finished_at)],
        ["Waited in queue", seconds(j.created_at, j.started_at)],
        ["Ran for", seconds(j.started_at, j.finished_at)],
        ["Attempts", j.attempts],
        [
          "Credits",
          `${j.credits.billed ? "billed" : "not billed"} · ${j.credits.pages_estimated} pages estimated · ${j.credits.credits_per_page} per page · ${j.credits.credits_reserved} reserved`,
        ],
      ];
      if (j.result)
        rows.push([
          "Result",
          `${j.result.filename ?? j.result.type} · ${formatBytes(j.result.bytes)} · ${j.result.pages_processed} pages processed · expires ${formatTime(j.result.expires_at)}`,
        ]);
      if (j.error) rows.push(["Error", `${j.error.code}: ${j.error.message}`]);
      replace(
        detail,
        h("h2", {}, `Job ${j.operation}`),
        h(
          "dl",
          { class: "facts" },
          rows.map(([k, v]) => [h("dt", {}, k), h("dd", {}, String(v ?? "–"))]),
        ),
        h("h3", {}, "Options"),
        h("pre", { tabindex: "0" }, JSON.stringify(j.options, null, 2)),
        Object.keys(j.metadata ?? {}).length
          ? [h("h3", {}, "Metadata"), h("pre", {}, JSON.stringify(j.metadata, null, 2))]
          : null,
        h(
          "div",
          { class: "actions" },
          j.status === "succeeded" && j.result?.type !== "json" ? downloadLink(j) : null,
          !isFinal(j.status)
            ? h(
                "button",
                {
                  type: "button",
                  onclick: async () => {
                    await call("POST", `/jobs/${j.id}/cancel`).catch(() => {});
                    void showJob(j.id);
                    void load();
                  },
                },
                "Cancel",
              )
            : null,
          h("button", { type: "button", onclick: () => void showJob(j.id) }, "Refresh"),
        ),
      );
      detail.querySelector("h2")?.setAttribute("tabindex", "-1");
      (detail.querySelector("h2") as HTMLElement).focus();
    } catch (err) {
      replace(detail, h("p", { class: "error", role: "alert" }, describe(err)));
    }
  }

  status.addEventListener("change", () => {
    cursors = [undefined];
    pageIndex = 0;
    void load();
  });
  prev.addEventListener("click", () => {
    pageIndex = Math.max(0, pageIndex - 1);
    void load();
  });
  next.addEventListener("click", () => {
    pageIndex++;
    void load();
  });
  const element = h(
    "div",
    { class: "view" },
    h(
      "section",
      { class: "card" },
      h("h1", {}, "Jobs"),
      h(
        "div",
        { class: "row" },
        field("Status", status),
        h("button", { type: "button", onclick: () => void load() }, "Refresh"),
      ),
      list,
      h("div", { class: "actions" }, prev, next),
    ),
    detail,
  );
  return { title: "Jobs", element, show: () => void load() };
}
