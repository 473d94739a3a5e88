// Usage: this period's credits (GET /usage) and a stacked bar plot per day and operation of
// credits or pages processed (GET /usage/daily, an extension), drawn with uPlot, with the same
// figures as a table for screen readers.
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { call, describe } from "../api";
import { field, h, replace, formatTime } from "../dom";
import type { Session, View } from "../view";

const palette = [
  "#2563eb",
  "#db2777",
  "#16a34a",
  "#d97706",
  "#7c3aed",
  "#0891b2",
  "#dc2626",
  "#65a30d",
  "#9333ea",
  "#0d9488",
  "#ea580c",
  "#4f46e5",
];

function plot(daily: any, metric: "credits" | "pages", target: HTMLElement) {
  const days: string[] = [];
  const start = new Date(daily.period.start);
  const today = new Date();
  for (let d = new Date(start); d <= today && d < new Date(daily.period.end); d.setUTCDate(d.getUTCDate() + 1))
    days.push(d.toISOString().slice(0, 10));
  const ops = [...new Set<string>(daily.data.map((r: any) => r.operation))];
  const values = ops.map((op) =>
    days.map((day) => daily.data.find((r: any) => r.date === day && r.operation === op)?.[metric] ?? 0),
  );
  // Stacked: each series is drawn as the running total, the last one on top.
  const stacked = values.map((_, i) => days.map((__, d) => values.slice(0, i + 1).reduce((s, v) => s + v[d]!, 0)));
  const xs = days.map((d) => Date.parse(d) / 1000);
  const width = Math.max(280, target.clientWidth || 600);
  const dark =
    (matchMedia("(prefers-color-scheme: dark)").matches && document.documentElement.dataset.theme !== "light") ||
    document.documentElement.dataset.theme === "dark";
  const ink = dark ? "#e5e7eb" : "#1f2937";
  const grid = dark ? "#374151" : "#e5e7eb";
  const bars = uPlot.paths.bars!({ size: [0.7, 40] });
  replace(target);
  if (ops.length === 0)
    return target.append(
      h("p", {}, `No ${metric === "credits" ? "credits charged" : "pages processed"} this period yet.`),
    );
  new uPlot(
    {
      width,
      height: 260,
      title: metric === "credits" ? "Credits per day" : "Pages processed per day",
      series: [
        {},
        ...ops
          .map((op, i) => ({
            label: op,
            stroke: palette[i % palette.length],
            fill: palette[i % palette.length] + "cc",
            paths: bars,
            points: { show: false },
          }))
          .reverse(),
      ],
      axes: [
        { stroke: ink, grid: { stroke: grid } },
        { stroke: ink, grid: { stroke: grid } },
      ],
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
    },
    [xs, ...stacked.reverse()] as any,
    target,
  );
  const table = h(
    "table",
    { class: "table" },
    h("caption", {}, `${metric === "credits" ? "Credits" : "Pages processed"} per day and operation`),
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", { scope: "col" }, "Day"),
        ops.map((op) => h("th", { scope: "col" }, op)),
      ),
    ),
    h(
      "tbody",
      {},
      days.map((d, di) =>
        values.some((v) => v[di])
          ? h(
              "tr",
              {},
              h("th", { scope: "row" }, d),
              values.map((v) => h("td", {}, String(v[di]))),
            )
          : null,
      ),
    ),
  );
  target.append(h("details", {}, h("summary", {}, "Show as a table"), table));
}

export function usageView(session: Session): View {
  const totals = h("div");
  const chart = h("div", { class: "chart" });
  const sandbox = session.account.key.mode === "test";
  const metric = h(
    "select",
    {},
    h("option", { value: "credits" }, "Credits"),
    h("option", { value: "pages" }, "Pages processed"),
  );
  metric.value = sandbox ? "pages" : "credits";
  let daily: any = null;
  metric.addEventListener("change", () => daily && plot(daily, metric.value as "credits" | "pages", chart));

  async function load() {
    try {
      const [u, d] = await Promise.all([call("GET", "/usage"), call("GET", "/usage/daily")]);
      daily = d;
      const cells: [string, string][] = [
        ["Used", `${u.used_credits} credits`],
        ["Included", `${u.included_credits} credits`],
        ["Remaining", `${u.remaining_credits} credits`],
        ["Reserved by running jobs", `${u.reserved_credits} credits (${u.pages_in_flight} pages)`],
        ["Overage", `${u.overage_credits} credits · ${u.overage_pages} pages · ${u.overage_amount_eur} EUR`],
        ["Spending cap", u.spending_cap_eur === null ? "none" : `${u.spending_cap_eur} EUR`],
      ];
      replace(
        totals,
        sandbox
          ? h(
              "p",
              { class: "note" },
              "Sandbox keys are never billed: credits stay at zero. The plot shows pages processed instead.",
            )
          : null,
        h(
          "p",
          { class: "muted" },
          `Period ${u.period.id}: ${formatTime(u.period.start)} – ${formatTime(u.period.end)}`,
        ),
        h(
          "dl",
          { class: "stats" },
          cells.map(([k, v]) => h("div", {}, h("dt", {}, k), h("dd", {}, v))),
        ),
      );
      plot(d, metric.value as "credits" | "pages", chart);
    } catch (err) {
      replace(totals, h("p", { class: "error", role: "alert" }, describe(err)));
    }
  }
  return {
    title: "Usage",
    element: h(
      "div",
      { class: "view" },
      h("section", { class: "card" }, h("h1", {}, "Usage"), totals, field("Plot", metric), chart),
    ),
    show: () => void load(),
  };
}
