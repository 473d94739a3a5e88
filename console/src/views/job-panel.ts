// One job, watched until it ends: status in words, a progress bar driven by `progress`, Cancel
// while it can run, Download (fetched with the Bearer key) on success, the error on failure.
import { call, describe, nextPollDelay, sleep } from "../api";
import { h, replace, formatBytes } from "../dom";

const finalStates = ["succeeded", "failed", "cancelled"];

export function isFinal(status: string) {
  return finalStates.includes(status);
}

/** A link that fetches the job's result with the key, then saves it under its filename. */
export function downloadLink(job: any, text = "Download"): HTMLAnchorElement {
  const a = h("a", { href: "#", class: "button", download: job.result?.filename ?? "result" }, text);
  let fetched = false;
  a.addEventListener("click", async (e) => {
    if (fetched) return;
    e.preventDefault();
    a.setAttribute("aria-busy", "true");
    try {
      const res = await call<Response>("GET", `/jobs/${job.id}/result`, { raw: true });
      a.href = URL.createObjectURL(await res.blob());
      fetched = true;
      a.click();
    } catch (err) {
      a.after(h("p", { class: "error", role: "alert" }, describe(err)));
    } finally {
      a.removeAttribute("aria-busy");
    }
  });
  return a;
}

export interface JobPanel {
  element: HTMLElement;
  /** Polls until the job ends; resolves with its final representation. */
  watch(job: any): Promise<any>;
}

export function jobPanel(onFinished?: (job: any) => void | Promise<void>): JobPanel {
  const status = h("p", { class: "status", role: "status", "aria-live": "polite" });
  const bar = h(
    "div",
    {
      class: "progress",
      role: "progressbar",
      "aria-label": "Job progress",
      "aria-valuemin": "0",
      "aria-valuemax": "100",
      "aria-valuenow": "0",
    },
    h("div", { class: "fill" }),
  );
  const actions = h("div", { class: "actions" });
  const detail = h("div", { class: "job-detail" });
  const element = h(
    "section",
    { class: "card job", "aria-label": "Job" },
    h("h2", {}, "Job"),
    status,
    bar,
    actions,
    detail,
  );
  element.hidden = true;
  let controller: AbortController | null = null;

  function render(job: any) {
    const p = job.progress ?? { percent: 0, pages_done: 0, pages_total: 0 };
    bar.setAttribute("aria-valuenow", String(p.percent));
    bar.setAttribute("aria-valuetext", `${p.percent}% (${p.pages_done} of ${p.pages_total} pages)`);
    (bar.firstElementChild as HTMLElement).style.width = `${p.percent}%`;
    bar.dataset.status = job.status;
    replace(
      status,
      h("strong", { class: `state ${job.status}` }, job.status),
      ` · ${job.operation} · ${p.pages_done}/${p.pages_total} pages · ${p.percent}%`,
    );
    replace(actions);
    if (!isFinal(job.status)) {
      actions.append(
        h(
          "button",
          {
            type: "button",
            onclick: async (e: Event) => {
              (e.target as HTMLButtonElement).disabled = true;
              try {
                render(await call("POST", `/jobs/${job.id}/cancel`));
              } catch (err) {
                actions.append(h("p", { class: "error", role: "alert" }, describe(err)));
              }
            },
          },
          "Cancel",
        ),
      );
    }
    if (job.status === "succeeded" && job.result?.type !== "json") {
      actions.append(
        downloadLink(job),
        h("span", { class: "muted" }, ` ${job.result?.filename ?? ""} · ${formatBytes(job.result?.bytes)}`),
      );
    }
    replace(
      detail,
      job.status === "failed" && job.error
        ? h("p", { class: "error", role: "alert" }, `${job.error.message} (${job.error.code})`)
        : null,
    );
  }

  return {
    element,
    async watch(job) {
      controller?.abort();
      const mine = (controller = new AbortController());
      element.hidden = false;
      render(job);
      let delay = 0;
      while (!isFinal(job.status)) {
        delay = nextPollDelay(delay);
        try {
          await sleep(delay, mine.signal);
          job = await call("GET", `/jobs/${job.id}`, { signal: mine.signal });
        } catch (err) {
          if (mine.signal.aborted) return job;
          replace(detail, h("p", { class: "error", role: "alert" }, `Could not refresh the job: ${describe(err)}`));
          continue;
        }
        render(job);
      }
      await onFinished?.(job);
      return job;
    },
  };
}
