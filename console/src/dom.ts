// A small element builder: h("button", { type: "button", onclick }, "Run"). Attributes that
// start with "on" become listeners; booleans toggle the attribute; text children are escaped.
type Child = Node | string | number | null | undefined | false | Child[];

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, unknown> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v as EventListener);
    else if (k === "class") el.className = String(v);
    else if (k === "value" && "value" in el) (el as HTMLInputElement).value = String(v);
    else if (k === "checked" && "checked" in el) (el as HTMLInputElement).checked = Boolean(v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

export function append(el: Element, children: Child[]): void {
  for (const c of children.flat(Infinity as 1) as Child[]) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
}

export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

let ids = 0;
/** A unique id for label/for and aria-describedby pairs. */
export const uid = (prefix: string) => `${prefix}-${++ids}`;

/** A labelled control: <div class=field><label for>…</label>control<small id>hint</small></div>. */
export function field(label: string, control: HTMLElement, hint?: string): HTMLDivElement {
  control.id ||= uid("f");
  const hintEl = hint ? h("small", { id: uid("hint") }, hint) : null;
  if (hintEl) control.setAttribute("aria-describedby", hintEl.id);
  return h("div", { class: "field" }, h("label", { for: control.id }, label), control, hintEl);
}

export function formatBytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return "–";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function formatTime(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : "–";
}

export function seconds(from: string | null | undefined, to: string | null | undefined): string {
  if (!from || !to) return "–";
  return `${((Date.parse(to) - Date.parse(from)) / 1000).toFixed(1)} s`;
}
