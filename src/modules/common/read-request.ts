// Reading requests strictly: query strings coerced only in unambiguous forms (no "1" for 1 in
// JSON, no 1.5 for an integer), JSON bodies bounded and checked for strings Postgres can store.
import { Kind, type TObject } from "@sinclair/typebox";
import { ApiError } from "../../domain/errors";
import { readOrStall } from "./body-stall";
import { check, pointerToParam } from "../../domain/schema-check";

/** Query strings are text: coerce only unambiguous forms, then validate strictly. */
export function checkQuery<T>(schema: TObject | undefined, search: URLSearchParams): T {
  const raw: Record<string, unknown> = {};
  for (const [k, v] of search) {
    if (k in raw) throw new ApiError("validation_error", `\`${k}\`: given more than once.`, k);
    raw[k] = v;
  }
  if (!schema) {
    const extra = Object.keys(raw)[0];
    if (extra !== undefined) throw new ApiError("validation_error", `\`${extra}\`: Unknown query parameter.`, extra);
    return {} as T;
  }
  for (const [k, v] of Object.entries(raw)) {
    const prop = schema.properties[k];
    if (!prop) throw new ApiError("validation_error", `\`${k}\`: Unknown query parameter.`, k);
    const kind = prop[Kind];
    if ((kind === "Integer" || kind === "Number") && typeof v === "string") {
      const ok = kind === "Integer" ? /^-?\d{1,15}$/.test(v) : /^-?\d+(\.\d+)?$/.test(v);
      raw[k] = ok ? Number(v) : v;
    } else if (kind === "Boolean" && (v === "true" || v === "false")) raw[k] = v === "true";
  }
  return check<T>(schema, raw);
}

const maxJsonBytes = 1024 * 1024;

export async function readJson(request: Request): Promise<unknown> {
  const type = (request.headers.get("content-type") || "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json") {
    throw new ApiError("validation_error", "The body must be JSON with `Content-Type: application/json`.", null);
  }
  // The server accepts bodies of any size (uploads enforce MAX_UPLOAD_BYTES themselves), so a
  // JSON body is read only up to its own limit, never whole.
  const tooLarge = () => new ApiError("validation_error", "The JSON body is larger than 1 MB.", null);
  if (Number(request.headers.get("content-length") || "0") > maxJsonBytes) throw tooLarge();
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { value, done } = await readOrStall(reader);
      if (done) break;
      size += value.length;
      if (size > maxJsonBytes) {
        void reader.cancel().catch(() => {});
        throw tooLarge();
      }
      chunks.push(value);
    }
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new ApiError("validation_error", "The body is not valid UTF-8.", null);
  }
  if (!text.trim()) throw new ApiError("validation_error", "The body is empty; a JSON object is expected.", null);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ApiError("validation_error", `Malformed JSON: ${(e as Error).message}`, null);
  }
  assertStorableStrings(value);
  return value;
}

const maxJsonDepth = 32;

/** Why a string cannot be stored in Postgres text/jsonb, or null when it can. */
export function unstorable(s: string): string | null {
  if (s.includes("\u0000")) return "contains the NUL character (U+0000)";
  if (!s.isWellFormed()) return "contains an unpaired UTF-16 surrogate (not valid Unicode)";
  return null;
}

/**
 * Every string of a JSON body, keys included, must be storable: Postgres text and jsonb cannot
 * hold U+0000 or unpaired surrogates, and would fail the request late with a 500. Checked once
 * here, at the edge, so every route is covered; nesting deeper than 32 levels is refused too.
 */
export function assertStorableStrings(value: unknown, path = "", depth = 0): void {
  if (depth > maxJsonDepth)
    throw new ApiError(
      "validation_error",
      `The JSON body is nested deeper than ${maxJsonDepth} levels.`,
      pointerToParam(path),
    );
  if (typeof value === "string") {
    const why = unstorable(value);
    if (why) {
      const param = pointerToParam(path);
      throw new ApiError("validation_error", `${param ? `\`${param}\`: ` : ""}The string ${why}.`, param);
    }
  } else if (Array.isArray(value)) value.forEach((v, i) => assertStorableStrings(v, `${path}/${i}`, depth + 1));
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      const why = unstorable(k);
      if (why) {
        // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is the character reported here
        const param = pointerToParam(`${path}/${k.replace(/\u0000/g, "\\u0000")}`);
        throw new ApiError("validation_error", `A field name ${why}.`, param);
      }
      assertStorableStrings(v, `${path}/${k}`, depth + 1);
    }
  }
}
