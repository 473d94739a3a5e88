// "Run an operation": file (input or drag and drop), operation from GET /operations, the
// options form generated from that operation's schema, Run; then the job panel and, for OCR
// blocks, the recognised text beside the page with its word boxes.
import { call, describe, ApiProblem } from "../api";
import { field, h, replace } from "../dom";
import { schemaForm, type SchemaForm } from "../schema-form";
import { jobPanel } from "./job-panel";
import { ocrResult } from "./ocr";
import type { Session, View } from "../view";

const mimeByKind: Record<string, string> = {
  pdf: ".pdf,application/pdf",
  docx: ".docx",
  xlsx: ".xlsx",
  csv: ".csv,text/csv",
  jpeg: ".jpg,.jpeg,image/jpeg",
  png: ".png,image/png",
  webp: ".webp,image/webp",
};

export function runView(session: Session): View {
  const ops: any[] = session.catalogue.supported.filter((o: any) => o.available);
  const uploaded = new WeakMap<File, any>();

  const fileInput = h("input", { type: "file", name: "file" });
  const drop = h("div", { class: "drop" }, field("File", fileInput, "Choose a file, or drop one here."));
  const chosen = h("p", { class: "muted", "aria-live": "polite" });
  const showChosen = () =>
    (chosen.textContent = fileInput.files?.length ? [...fileInput.files].map((f) => f.name).join(", ") : "");
  fileInput.addEventListener("change", showChosen);
  drop.addEventListener("dragover", (e) => {
    e.preventDefault();
    drop.classList.add("over");
  });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    if (e.dataTransfer?.files.length) {
      fileInput.files = e.dataTransfer.files;
      showChosen();
    }
  });

  const opSelect = h(
    "select",
    { name: "operation" },
    ops.map((o) => h("option", { value: o.name }, o.name)),
  );
  const opHint = h("p", { class: "muted", id: "op-summary" });
  opSelect.setAttribute("aria-describedby", "op-summary");
  const optionsSlot = h("div");
  const message = h("p", { class: "error", role: "alert", hidden: true });
  const run = h("button", { type: "submit", class: "primary" }, "Run");
  const ocrSlot = h("div");
  let form: SchemaForm = schemaForm({});
  let targetOptions: Record<string, string[]> | null = null;

  function selectOperation() {
    const op = ops.find((o) => o.name === opSelect.value)!;
    const credits =
      session.account.key.mode === "test"
        ? "free in the sandbox"
        : op.credits_per_page
          ? `${op.credits_per_page} credit(s) per page`
          : "free";
    opHint.textContent = `${op.summary} Accepts ${op.accepts.join(", ")}; ${credits}.`;
    fileInput.multiple = op.input === "file_ids";
    fileInput.accept = op.accepts.map((k: string) => mimeByKind[k] ?? "").join(",");
    form = schemaForm(op.options);
    targetOptions = op.options_by_target ?? null;
    const target = form.controlOf("target");
    if (targetOptions && target) {
      // The option's label is the target's name (values are indexes into the schema's enum).
      const restrict = () => {
        const chosen = (target as HTMLSelectElement).selectedOptions[0]?.textContent ?? "";
        form.restrict(["target", ...(targetOptions![chosen] ?? [])]);
      };
      target.addEventListener("change", restrict);
      restrict();
    }
    replace(optionsSlot, form.element);
  }
  opSelect.addEventListener("change", selectOperation);
  selectOperation();

  const panel = jobPanel(async (job) => {
    if (job.status === "succeeded" && job.result?.type === "json") {
      try {
        const blocks = await call("GET", `/jobs/${job.id}/result`, { query: { format: "json" } });
        replace(ocrSlot, ocrResult(blocks, lastFiles[0] ?? null));
      } catch (err) {
        replace(ocrSlot, h("p", { class: "error", role: "alert" }, describe(err)));
      }
    }
  });
  let lastFiles: File[] = [];

  async function upload(file: File) {
    const known = uploaded.get(file);
    if (known && Date.parse(known.expires_at) > Date.now() + 60_000) return known;
    const form = new FormData();
    form.append("file", file, file.name);
    const obj = await call("POST", "/files", { form });
    uploaded.set(file, obj);
    return obj;
  }

  const formEl = h(
    "form",
    {
      class: "card",
      "aria-label": "Run an operation",
      onsubmit: async (e: Event) => {
        e.preventDefault();
        message.hidden = true;
        form.flag(null);
        const files = [...(fileInput.files ?? [])];
        const op = ops.find((o) => o.name === opSelect.value)!;
        if (files.length === 0) return fail("Choose a file first.", fileInput);
        if (op.input === "file_ids" && files.length < 2)
          return fail(`${op.name} needs at least two files: select several at once.`, fileInput);
        const read = form.read();
        if ("error" in read) return fail(read.error, form.controlOf(read.name));
        run.disabled = true;
        replace(ocrSlot);
        try {
          run.textContent = "Uploading…";
          const objs = [];
          for (const f of files) objs.push(await upload(f));
          run.textContent = "Starting…";
          const body: Record<string, unknown> = { operation: op.name, options: read.options };
          if (op.input === "file_ids") body.file_ids = objs.map((o) => o.id);
          else body.file_id = objs[0].id;
          const job = await call("POST", "/jobs", { json: body, headers: { "idempotency-key": crypto.randomUUID() } });
          lastFiles = files;
          run.disabled = false;
          run.textContent = "Run";
          await panel.watch(job);
        } catch (err) {
          if (err instanceof ApiProblem && err.param?.startsWith("options."))
            form.flag(err.param.slice(8), err.message);
          fail(describe(err));
        } finally {
          run.disabled = false;
          run.textContent = "Run";
        }
      },
    },
    h("h1", {}, "Run an operation"),
    drop,
    chosen,
    field("Operation", opSelect),
    opHint,
    optionsSlot,
    run,
    message,
  );

  function fail(text: string, focus?: HTMLElement) {
    message.textContent = text;
    message.hidden = false;
    focus?.focus();
  }

  return { title: "Run", element: h("div", { class: "view" }, formEl, panel.element, ocrSlot) };
}
