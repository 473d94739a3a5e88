// OCR blocks beside the page they came from: the page is drawn from the user's own file
// (pdf.js for PDFs, the image itself otherwise) and the word boxes, given in points from the
// top-left of the displayed page, are laid over it as SVG in the same units.
import { h, replace, field } from "../dom";

async function renderPdfPage(file: File, pageIndex: number, canvas: HTMLCanvasElement): Promise<void> {
  const pdfjs = await import("pdfjs-dist");
  const base = `/console/assets/pdfjs-${pdfjs.version}/`;
  pdfjs.GlobalWorkerOptions.workerSrc = `${base}pdf.worker.min.mjs`;
  const task = pdfjs.getDocument({
    data: new Uint8Array(await file.arrayBuffer()),
    wasmUrl: `${base}wasm/`,
    standardFontDataUrl: `${base}standard_fonts/`,
    cMapUrl: `${base}cmaps/`,
    iccUrl: `${base}iccs/`,
    isEvalSupported: false,
  } as any);
  const doc = await task.promise;
  try {
    const page = await doc.getPage(pageIndex + 1);
    // Enough pixels for a sharp picture at the width it is shown, capped for huge pages.
    const base1 = page.getViewport({ scale: 1 });
    const scale = Math.min(2, 1600 / base1.width);
    const viewport = page.getViewport({ scale });
    canvas.width = Math.round(viewport.width);
    canvas.height = Math.round(viewport.height);
    await page.render({ canvas, canvasContext: canvas.getContext("2d")!, viewport } as any).promise;
  } finally {
    await task.destroy();
  }
}

function pagePicture(file: File | null, page: any): HTMLElement {
  const svgNs = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(svgNs, "svg");
  svg.setAttribute("viewBox", `0 0 ${page.width} ${page.height}`);
  svg.setAttribute("preserveAspectRatio", "none");
  svg.setAttribute("aria-hidden", "true");
  svg.classList.add("boxes");
  for (const block of page.blocks ?? []) {
    for (const line of block.lines ?? []) {
      for (const word of line.words ?? []) {
        const [x0, y0, x1, y1] = word.bbox as number[];
        const r = document.createElementNS(svgNs, "rect");
        r.setAttribute("x", String(x0));
        r.setAttribute("y", String(y0));
        r.setAttribute("width", String(x1! - x0!));
        r.setAttribute("height", String(y1! - y0!));
        const t = document.createElementNS(svgNs, "title");
        t.textContent = `${word.text} (${Math.round(word.confidence * 100)}%)`;
        r.append(t);
        svg.append(r);
      }
    }
  }
  const status = h("p", { class: "muted" });
  const frame = h("div", { class: "page-frame", style: `aspect-ratio: ${page.width} / ${page.height}` });
  const figure = h(
    "figure",
    { class: "page-picture" },
    frame,
    h("figcaption", {}, `Page ${page.page + 1} with ${svg.childElementCount} word boxes`),
    status,
  );
  if (!file) {
    status.textContent = "The page picture needs the file chosen in this tab.";
  } else if (file.type.startsWith("image/")) {
    const img = h("img", { src: URL.createObjectURL(file), alt: `Page ${page.page + 1} of ${file.name}` });
    frame.append(img, svg);
  } else {
    const canvas = h("canvas", { role: "img", "aria-label": `Page ${page.page + 1} of ${file.name}` });
    frame.append(canvas, svg);
    status.textContent = "Drawing the page…";
    renderPdfPage(file, page.page, canvas).then(
      () => (status.textContent = ""),
      (e) => (status.textContent = `The page could not be drawn here: ${e?.message ?? e}`),
    );
  }
  return figure;
}

export function ocrResult(result: any, file: File | null): HTMLElement {
  const pages: any[] = result.pages ?? [];
  const body = h("div", { class: "ocr-page" });
  const show = (i: number) => {
    const page = pages[i];
    if (!page) return replace(body, h("p", {}, "No pages in the result."));
    const text =
      page.ocr === false
        ? `(not OCRed: the page already has text — ${page.skipped ?? ""})`
        : page.text || "(no text found)";
    replace(
      body,
      h(
        "div",
        { class: "ocr-text" },
        h("h3", {}, "Recognised text"),
        h("pre", { tabindex: "0", "aria-label": `Text of page ${page.page + 1}` }, text),
      ),
      pagePicture(file, page),
    );
  };
  const chooser =
    pages.length > 1
      ? field(
          "Page",
          h(
            "select",
            { onchange: (e: Event) => show(Number((e.target as HTMLSelectElement).value)) },
            pages.map((p, i) => h("option", { value: String(i) }, `Page ${p.page + 1}`)),
          ),
        )
      : null;
  show(0);
  return h(
    "section",
    { class: "card ocr", "aria-label": "OCR result" },
    h("h2", {}, "OCR result"),
    h("p", { class: "muted" }, `${pages.length} page(s) · engine ${result.engine ?? "?"} · mode ${result.mode ?? "?"}`),
    chooser,
    body,
  );
}
