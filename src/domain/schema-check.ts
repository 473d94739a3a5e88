// Strict validation of a value against a TypeBox schema: unknown fields are errors, integers
// must be integers, and the first failure names its field (job options and request bodies alike).
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import { FormatRegistry, type TObject, type TSchema } from "@sinclair/typebox";
import { ApiError } from "./errors";

// TypeBox validates only the formats registered here.
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
if (!FormatRegistry.Has("uuid")) FormatRegistry.Set("uuid", (v) => uuidPattern.test(v));
if (!FormatRegistry.Has("date-time")) FormatRegistry.Set("date-time", (v) => !Number.isNaN(Date.parse(v)));
if (!FormatRegistry.Has("uri")) FormatRegistry.Set("uri", (v) => URL.canParse(v));

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

/** Enumerations whose refusal says more than the accepted values: the extra sentence for a
 * refused value (the OCR language codes say how to install a missing language). */
export const refusalHints = new WeakMap<TSchema, (value: unknown) => string>();

function checker(schema: TSchema): TypeCheck<TSchema> {
  let c = compiled.get(schema);
  if (!c) {
    c = TypeCompiler.Compile(schema);
    compiled.set(schema, c);
  }
  return c;
}

/** "/options/regions/0/x" -> "options.regions[0].x" */
export function pointerToParam(path: string, prefix = ""): string | null {
  const parts = path.split("/").filter(Boolean);
  let out = prefix;
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : out ? `.${p}` : p;
  return out || null;
}

export function check<T>(
  schema: TSchema,
  value: unknown,
  paramPrefix = "",
  code: "validation_error" | "invalid_options" = "validation_error",
): T {
  const c = checker(schema);
  if (c.Check(value)) return value as T;
  const first = c.Errors(value).First();
  let param = first ? pointerToParam(first.path, paramPrefix) : paramPrefix || null;
  let message = first ? first.message : "Invalid value";
  // TypeBox reports an unknown property at the object's path; name the property itself.
  if (
    first?.schema &&
    (first.schema as TObject).additionalProperties === false &&
    first.value &&
    typeof first.value === "object" &&
    !Array.isArray(first.value)
  ) {
    const known = Object.keys((first.schema as TObject).properties ?? {});
    const extra = Object.keys(first.value as object).find((k) => !known.includes(k));
    if (extra !== undefined) {
      param = pointerToParam(first.path + "/" + extra, paramPrefix);
      message = "Unknown field";
    }
  }
  // A union of constants (an enumeration: mode, output, language codes...): name the
  // accepted values instead of TypeBox's "Expected union value".
  const alternatives = (first?.schema as { anyOf?: { const?: unknown }[] } | undefined)?.anyOf;
  if (first && alternatives?.length && alternatives.every((a) => a.const !== undefined)) {
    const hint = refusalHints.get(first.schema);
    message = `${JSON.stringify(first.value)} is not supported${hint ? ` (${hint(first.value)})` : ""}; expected one of ${alternatives.map((a) => String(a.const)).join(", ")}`;
  }
  const where = param ? `\`${param}\`: ` : "";
  throw new ApiError(code, `${where}${message}.`, param);
}
