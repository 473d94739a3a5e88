// Pure validation of a job request against the operation catalogue and its input files:
// which files, which options (typed by the catalogue's schema), and how many pages it will bill.
// Every rule that can be checked before the job runs is checked here, with the spec's codes.
import { ApiError } from "./errors";
import { check } from "./schema-check";
import {
  convertOptionsByTarget,
  convertPairs,
  ocrSearchablePdfOptions,
  operationNamed,
  type OperationDefinition,
  type OperationName,
  type RequestOptionsOf,
  unsupportedConvertTargets,
  unsupportedOperations,
  withDefaults,
} from "./operations";

export interface JobRequest {
  operation: string;
  file_id?: string | null;
  file_ids?: string[] | null;
  options?: Record<string, unknown> | null;
  metadata?: Record<string, string> | null;
}

export interface InputFile {
  id: string;
  kind: string;
  page_count: number | null;
  encrypted: boolean;
}

/** An operation with options checked against its schema: `options` is typed by `name`. */
export type CheckedOptions = { [Op in OperationName]: { name: Op; options: RequestOptionsOf<Op> } }[OperationName];

export interface RequestShape {
  operation: OperationDefinition;
  fileIds: string[];
  checked: CheckedOptions;
}

export interface JobPlan {
  name: OperationName;
  operation: OperationDefinition;
  fileIds: string[];
  /** The options as the client sent them (split: with its mode), stored and echoed; the worker fills in the defaults. */
  options: RequestOptionsOf<OperationName>;
  pagesEstimated: number;
}

/** Step 1, before files are loaded: operation, input shape and option schema. */
export function checkRequestShape(req: JobRequest): RequestShape {
  if (Object.hasOwn(unsupportedOperations, req.operation)) {
    throw new ApiError(
      "operation_unsupported",
      `The operation \`${req.operation}\` is not supported: ${unsupportedOperations[req.operation]}`,
      "operation",
    );
  }
  const operation = operationNamed(req.operation);
  if (!operation)
    throw new ApiError("validation_error", `Unknown operation \`${req.operation}\`; see GET /operations.`, "operation");
  if (!operation.available)
    throw new ApiError(
      "operation_unsupported",
      `The operation \`${req.operation}\` is ${operation.unavailableReason ?? "not available"}.`,
      "operation",
    );
  const options = { ...(req.options ?? {}) };
  if (
    operation.name === "convert" &&
    typeof options.target === "string" &&
    Object.hasOwn(unsupportedConvertTargets, options.target)
  ) {
    throw new ApiError(
      "operation_unsupported",
      `Converting to \`${options.target}\` is not supported: ${unsupportedConvertTargets[options.target]}`,
      "operation",
    );
  }
  if (operation.name === "convert" && options.target === undefined)
    throw new ApiError("invalid_options", "`options.target` is required for convert.", "options.target");
  const checked = {
    name: operation.name,
    options: check(operation.options, options, "options", "invalid_options"),
  } as CheckedOptions;
  if (checked.name === "convert") {
    const { target } = checked.options;
    const allowed: readonly string[] = convertOptionsByTarget[target];
    const stray = Object.keys(checked.options).find((k) => k !== "target" && !allowed.includes(k));
    if (stray)
      throw new ApiError(
        "invalid_options",
        `\`options.${stray}\` does not apply to target ${target}.`,
        `options.${stray}`,
      );
  }
  let fileIds: string[];
  if (operation.inputs === "many") {
    if (req.file_id)
      throw new ApiError(
        "validation_error",
        `${operation.name} takes \`file_ids\` (2 to 50 PDFs), not \`file_id\`.`,
        "file_id",
      );
    fileIds = req.file_ids ?? [];
    if (fileIds.length < 2 || fileIds.length > 50)
      throw new ApiError("validation_error", `${operation.name} needs 2 to 50 files in \`file_ids\`.`, "file_ids");
  } else {
    if (req.file_ids?.length)
      throw new ApiError("validation_error", `${operation.name} takes one \`file_id\`, not \`file_ids\`.`, "file_ids");
    if (!req.file_id) throw new ApiError("validation_error", "`file_id` is required.", "file_id");
    fileIds = [req.file_id];
  }
  return { operation, fileIds, checked };
}

function pagesInRange(pages: number[] | undefined, count: number | null, param: string) {
  if (!pages || count === null) return;
  const bad = pages.find((p) => p >= count);
  if (bad !== undefined)
    throw new ApiError(
      "invalid_options",
      `\`${param}\` has page ${bad}, but the file has ${count} pages (indexes 0 to ${count - 1}).`,
      param,
    );
}

/** Step 2, with the input files loaded (in file_ids order): kinds, page-based options, pages billed. */
export function planJob(shape: RequestShape, files: InputFile[]): JobPlan {
  const { operation, checked } = shape;
  const first = files[0]!;
  const param = operation.inputs === "many" ? "file_ids" : "file_id";
  if (checked.name === "convert") {
    const { target } = checked.options;
    const pair = convertPairs.find((p) => p.from === first.kind && p.to === target);
    if (pair && !pair.available)
      throw new ApiError(
        "operation_unsupported",
        `Converting ${first.kind} to ${target} is not available in this release yet.`,
        "operation",
      );
    if (!pair) {
      const from = convertPairs.filter((p) => p.to === target).map((p) => p.from);
      throw new ApiError(
        "operation_unsupported",
        `Converting ${first.kind} to ${target} is not supported; ${target} can be made from ${from.join(", ") || "nothing"}. Supported pairs: ${convertPairs.map((p) => `${p.from}->${p.to}`).join(", ")}.`,
        "operation",
      );
    }
  } else {
    for (const f of files) {
      if (!(operation.accepts as string[]).includes(f.kind)) {
        throw new ApiError(
          "unsupported_file_type",
          `${operation.name} needs ${operation.accepts.join(" or ")} input, but file ${f.id} is ${f.kind}.`,
          param,
        );
      }
    }
  }
  const count = first.page_count;
  const pages = "pages" in checked.options ? checked.options.pages : undefined;
  pagesInRange(pages, count, "options.pages");
  let options: RequestOptionsOf<OperationName> = checked.options;

  switch (checked.name) {
    case "reorder": {
      const { order } = checked.options;
      if (count !== null) {
        const sorted = [...order].sort((a, b) => a - b);
        if (order.length !== count || sorted.some((v, i) => v !== i)) {
          throw new ApiError(
            "invalid_options",
            `\`options.order\` must be a full permutation of 0 to ${count - 1} (${count} pages).`,
            "options.order",
          );
        }
      }
      break;
    }
    case "delete_pages": {
      const del = checked.options.pages;
      pagesInRange(del, count, "options.pages");
      if (count !== null && new Set(del).size >= count)
        throw new ApiError("invalid_options", "Deleting every page would leave an empty document.", "options.pages");
      break;
    }
    case "split": {
      // The stored options of split name its mode (GET /jobs shows it), the default included.
      const { mode } = withDefaults("split", checked.options);
      options = { ...checked.options, mode };
      const { ranges, chunk_size } = checked.options;
      if (mode === "ranges") {
        if (!ranges)
          throw new ApiError("invalid_options", "`options.ranges` is required with mode ranges.", "options.ranges");
        ranges.forEach(([s, e], i) => {
          if (s > e)
            throw new ApiError(
              "invalid_options",
              `\`options.ranges[${i}]\`: start ${s} is after end ${e}.`,
              `options.ranges[${i}]`,
            );
          if (count !== null && e > count)
            throw new ApiError(
              "invalid_options",
              `\`options.ranges[${i}]\`: page ${e} is past the last page (${count}); ranges are 1-based.`,
              `options.ranges[${i}]`,
            );
        });
      } else if (ranges !== undefined)
        throw new ApiError("invalid_options", "`options.ranges` applies only to mode ranges.", "options.ranges");
      if (mode === "chunks") {
        if (chunk_size === undefined)
          throw new ApiError(
            "invalid_options",
            "`options.chunk_size` is required with mode chunks.",
            "options.chunk_size",
          );
      } else if (chunk_size !== undefined)
        throw new ApiError(
          "invalid_options",
          "`options.chunk_size` applies only to mode chunks.",
          "options.chunk_size",
        );
      break;
    }
    case "ocr":
    case "searchable_pdf":
      // gundam = single page: at most one index in pages (default: the first page).
      if (checked.options.mode === "gundam" && pages && pages.length > 1) {
        throw new ApiError(
          "invalid_options",
          "Mode gundam reads a single page: give at most one index in `options.pages`, or use mode base.",
          "options.pages",
        );
      }
      if (checked.name === "ocr") {
        const { output } = withDefaults("ocr", checked.options);
        const given = ocrSearchablePdfOptions.find((name) => checked.options[name] !== undefined);
        if (given && output !== "searchable_pdf")
          throw new ApiError(
            "invalid_options",
            `\`options.${given}\` applies only to output searchable_pdf (the output is ${output}).`,
            `options.${given}`,
          );
      }
      break;
    case "protect":
      if (checked.options.user_password === undefined && checked.options.owner_password === undefined) {
        throw new ApiError(
          "invalid_options",
          "Give `options.user_password`, `options.owner_password`, or both.",
          "options.user_password",
        );
      }
      break;
    case "redact": {
      checked.options.regions.forEach((r, i) => {
        if (count !== null && r.page >= count)
          throw new ApiError(
            "invalid_options",
            `\`options.regions[${i}].page\` is ${r.page}, but the file has ${count} pages.`,
            `options.regions[${i}].page`,
          );
      });
      break;
    }
  }

  let pagesEstimated: number;
  if (operation.inputs === "many") pagesEstimated = files.reduce((n, f) => n + (f.page_count ?? 1), 0);
  else if (checked.name === "redact") pagesEstimated = new Set(checked.options.regions.map((r) => r.page)).size;
  else if ((checked.name === "ocr" || checked.name === "searchable_pdf") && checked.options.mode === "gundam")
    pagesEstimated = 1;
  else if (pages && checked.name !== "rotate") pagesEstimated = pages.length;
  else pagesEstimated = count ?? 1;
  return { name: checked.name, operation, fileIds: shape.fileIds, options, pagesEstimated };
}
