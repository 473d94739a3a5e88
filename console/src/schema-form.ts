// Builds an operation's options form from its JSON Schema in GET /operations, so a new option
// or operation needs no console change. Values are read back into the `options` object.
import { field, h } from "./dom";

export interface JsonSchema {
  type?: string | string[];
  const?: unknown;
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema | JsonSchema[];
  description?: string;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
}

export interface SchemaForm {
  element: HTMLElement;
  /** The options object, or a message naming the field that cannot be read. */
  read(): { options: Record<string, unknown> } | { error: string; name: string };
  /** Shows only these option names (convert: options that apply to the chosen target). */
  restrict(names: string[] | null): void;
  /** Marks a field as the one the API refused. */
  flag(name: string | null, message?: string): void;
  controlOf(name: string): HTMLElement | undefined;
}

type Reader = (raw: string) => { value?: unknown; error?: string };

const isEnum = (s: JsonSchema) => Array.isArray(s.anyOf) && s.anyOf.length > 0 && s.anyOf.every((a) => "const" in a);
const label = (name: string) => name.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());

/** A value of the schema's shape, shown as the placeholder of JSON fields. */
function example(s: JsonSchema): unknown {
  if (isEnum(s)) return s.anyOf![0]!.const;
  if (s.anyOf?.length) return example(s.anyOf[0]!);
  if (s.type === "object")
    return Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, v]) => [k, example(v)]));
  if (s.type === "array") return Array.isArray(s.items) ? s.items.map(example) : [example(s.items ?? {})];
  if (s.type === "integer" || s.type === "number") return s.minimum && s.minimum > 0 ? s.minimum : 0;
  if (s.type === "boolean") return true;
  return "text";
}

function control(
  name: string,
  s: JsonSchema,
  required: boolean,
): { el: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement; read: Reader; hint?: string } {
  const optionalChoice = required ? [] : [h("option", { value: "" }, "(default)")];
  if (isEnum(s)) {
    const values = s.anyOf!.map((a) => a.const);
    const el = h(
      "select",
      { name },
      optionalChoice,
      values.map((v, i) => h("option", { value: String(i) }, String(v))),
    );
    return { el, read: (raw) => ({ value: raw === "" ? undefined : values[Number(raw)] }) };
  }
  if (s.type === "boolean") {
    const el = h(
      "select",
      { name },
      optionalChoice,
      h("option", { value: "true" }, "yes"),
      h("option", { value: "false" }, "no"),
    );
    return { el, read: (raw) => ({ value: raw === "" ? undefined : raw === "true" }) };
  }
  if (s.type === "integer" || s.type === "number") {
    const el = h("input", {
      name,
      type: "number",
      inputmode: "numeric",
      step: s.type === "integer" ? "1" : "any",
      min: s.minimum,
      max: s.maximum,
      required,
    });
    return {
      el,
      read: (raw) =>
        raw === "" ? {} : Number.isFinite(Number(raw)) ? { value: Number(raw) } : { error: "must be a number" },
    };
  }
  if (s.type === "string") {
    const secret = /password|secret/.test(name);
    const el = h("input", {
      name,
      type: secret ? "password" : "text",
      autocomplete: secret ? "new-password" : "off",
      maxlength: s.maxLength,
      required,
    });
    return { el, read: (raw) => (raw === "" ? {} : { value: raw }) };
  }
  const items = Array.isArray(s.items) ? undefined : s.items;
  if (s.type === "array" && items && (items.type === "integer" || items.type === "number")) {
    const el = h("input", { name, type: "text", inputmode: "numeric", placeholder: "e.g. 0, 2, 5", required });
    return {
      el,
      hint: "comma-separated",
      read: (raw) => {
        if (raw.trim() === "") return {};
        const parts = raw.split(/[\s,]+/).filter(Boolean);
        if (parts.some((p) => !/^-?\d+(\.\d+)?$/.test(p))) return { error: "must be numbers separated by commas" };
        return { value: parts.map(Number) };
      },
    };
  }
  if (s.anyOf?.length && s.anyOf.every((a) => a.type === "integer" || a.type === "string")) {
    const el = h("input", { name, type: "text", required });
    return {
      el,
      hint: "a number or a name",
      read: (raw) => (raw === "" ? {} : { value: /^\d+$/.test(raw) ? Number(raw) : raw }),
    };
  }
  // Anything richer (arrays of pairs, arrays of objects) is typed as JSON.
  const el = h("textarea", { name, rows: 3, spellcheck: "false", placeholder: JSON.stringify(example(s)), required });
  return {
    el,
    hint: `JSON, e.g. ${JSON.stringify(example(s))}`,
    read: (raw) => {
      if (raw.trim() === "") return {};
      try {
        return { value: JSON.parse(raw) };
      } catch {
        return { error: "is not valid JSON" };
      }
    },
  };
}

export function schemaForm(schema: JsonSchema): SchemaForm {
  const fields = new Map<
    string,
    { wrap: HTMLElement; el: HTMLElement & { value: string }; read: Reader; error: HTMLElement }
  >();
  const element = h("fieldset", { class: "options" }, h("legend", {}, "Options"));
  const props = Object.entries(schema.properties ?? {});
  if (props.length === 0) element.append(h("p", { class: "muted" }, "This operation has no options."));
  for (const [name, s] of props) {
    const required = (schema.required ?? []).includes(name);
    const c = control(name, s, required);
    const hint = [s.description, c.hint].filter(Boolean).join("; ");
    const wrap = field(`${label(name)}${required ? " (required)" : ""}`, c.el, hint || undefined);
    const error = h("small", { class: "error-text", id: `${c.el.id}-error`, hidden: true });
    wrap.append(error);
    element.append(wrap);
    fields.set(name, { wrap, el: c.el, read: c.read, error });
  }
  const form: SchemaForm = {
    element,
    controlOf: (name) => fields.get(name)?.el,
    restrict(names) {
      for (const [name, f] of fields) f.wrap.hidden = names !== null && !names.includes(name);
    },
    flag(name, message) {
      for (const [n, f] of fields) {
        const on = n === name;
        f.el.toggleAttribute("aria-invalid", on);
        f.error.hidden = !on;
        f.error.textContent = on ? (message ?? "") : "";
        const describedBy = (f.el.getAttribute("aria-describedby") ?? "")
          .split(" ")
          .filter((id) => id && id !== f.error.id);
        if (on) describedBy.push(f.error.id);
        f.el.setAttribute("aria-describedby", describedBy.join(" "));
      }
    },
    read() {
      const options: Record<string, unknown> = {};
      for (const [name, f] of fields) {
        if (f.wrap.hidden) continue;
        const r = f.read(f.el.value);
        if (r.error) return { error: `${label(name)} ${r.error}.`, name };
        if (r.value !== undefined) options[name] = r.value;
      }
      return { options };
    },
  };
  return form;
}
