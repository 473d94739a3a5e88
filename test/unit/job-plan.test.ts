// The API spec (docs/api.md), Jobs (creation request, operation catalogue and options) and Errors: the pure
// validation of a job request in src/domain/job-plan.ts — which names are refused, which
// options are invalid (and which option the error names), the file_id / file_ids rules and
// the pages a job is estimated (and billed) for.
import { describe, expect, test } from "bun:test";
import { checkRequestShape, planJob, type InputFile, type JobRequest } from "../../src/domain/job-plan";
import { convertPairs, type OperationName, operations, withDefaults } from "../../src/domain/operations";
import { ApiError } from "../../src/domain/errors";

const F1 = "11111111-1111-4111-8111-111111111111";
const F2 = "22222222-2222-4222-8222-222222222222";

function pdf(pages: number | null, id = F1, kind = "pdf"): InputFile {
  return { id, kind, page_count: pages, encrypted: pages === null };
}

function fails(fn: () => unknown, code: string, param?: string | null): ApiError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  if (!(caught instanceof ApiError))
    throw new Error(`expected ApiError ${code}, got ${caught === undefined ? "no error" : String(caught)}`);
  const got: { code: string; param: string | null } = { code: caught.code, param: caught.param };
  expect(got).toEqual({ code, param: param === undefined ? caught.param : param });
  return caught;
}

/** Shape + plan over one PDF of `pages` pages. */
function plan(req: JobRequest, files: InputFile[] = [pdf(4)]) {
  const p = planJob(checkRequestShape(req), files);
  return { ...p, options: p.options as Record<string, unknown> };
}

describe("operation names", () => {
  test("watermark, flatten and sign are refused with operation_unsupported on param operation", () => {
    for (const operation of ["watermark", "flatten", "sign"]) {
      const e = fails(() => checkRequestShape({ operation, file_id: F1 }), "operation_unsupported", "operation");
      expect(e.status).toBe(422);
      expect(e.message.length).toBeGreaterThan(20);
    }
  });

  test("operations without an executor (available: false in the catalogue) are refused with operation_unsupported, not accepted", () => {
    const unavailable = Object.values(operations)
      .filter((o) => !o.available)
      .map((o) => o.name);
    // At the time of writing: ocr, searchable_pdf, convert, compress and redact.
    for (const operation of unavailable)
      fails(() => checkRequestShape({ operation, file_id: F1, options: {} }), "operation_unsupported", "operation");
    for (const o of Object.values(operations).filter((x) => x.available)) expect(o.unavailableReason).toBeUndefined();
  });

  test("the structural page operations are available", () => {
    const available: string[] = Object.values(operations)
      .filter((o) => o.available)
      .map((o) => o.name);
    for (const name of ["delete_pages", "merge", "protect", "reorder", "rotate", "split", "unlock"])
      expect(available).toContain(name);
  });

  test("a convert pair without a converter is operation_unsupported; a pair outside the five is too", () => {
    const convert = operations.convert!;
    const saved = convert.available;
    convert.available = true; // pair rules apply once convert itself is offered
    try {
      for (const pair of convertPairs.filter((p) => !p.available)) {
        fails(
          () => plan({ operation: "convert", file_id: F1, options: { target: pair.to } }, [pdf(2, F1, pair.from)]),
          "operation_unsupported",
          "operation",
        );
      }
      fails(
        () => plan({ operation: "convert", file_id: F1, options: { target: "xlsx" } }, [pdf(2)]),
        "operation_unsupported",
        "operation",
      );
      fails(
        () => plan({ operation: "convert", file_id: F1, options: { target: "pdf" } }, [pdf(1, F1, "csv")]),
        "operation_unsupported",
        "operation",
      );
      fails(
        () => checkRequestShape({ operation: "convert", file_id: F1, options: {} }),
        "invalid_options",
        "options.target",
      );
      fails(
        () => checkRequestShape({ operation: "convert", file_id: F1, options: { target: "jpg", sheet: 1 } }),
        "invalid_options",
        "options.sheet",
      );
    } finally {
      convert.available = saved;
    }
  });

  test("convert targets pptx, png, html and txt are operation_unsupported on param operation", () => {
    for (const target of ["pptx", "png", "html", "txt"]) {
      fails(
        () => checkRequestShape({ operation: "convert", file_id: F1, options: { target } }),
        "operation_unsupported",
        "operation",
      );
    }
  });

  test("an unknown name is a validation_error on param operation", () => {
    fails(() => checkRequestShape({ operation: "frobnicate", file_id: F1 }), "validation_error", "operation");
    fails(() => checkRequestShape({ operation: "__proto__", file_id: F1 }), "validation_error", "operation");
    fails(() => checkRequestShape({ operation: "toString", file_id: F1 }), "validation_error", "operation");
  });

  test("every operation has the spec's job kind", () => {
    const kinds: Record<string, string> = {
      ocr: "ocr",
      searchable_pdf: "ocr",
      convert: "convert",
      compress: "compress",
      merge: "merge",
      split: "split",
      rotate: "page_ops",
      reorder: "page_ops",
      delete_pages: "page_ops",
      protect: "protect",
      unlock: "unlock",
      redact: "redact",
    };
    for (const [name, kind] of Object.entries(kinds))
      expect(operations[name as OperationName].kind).toBe(kind as never);
    expect(Object.keys(operations).sort()).toEqual(Object.keys(kinds).sort());
  });

  test("credits per page: ocr/searchable_pdf 3, convert/compress/redact 1, the rest free", () => {
    const credits = Object.fromEntries(Object.values(operations).map((o) => [o.name, o.creditsPerPage]));
    expect(credits).toEqual({
      ocr: 3,
      searchable_pdf: 3,
      convert: 1,
      compress: 1,
      redact: 1,
      merge: 0,
      split: 0,
      rotate: 0,
      reorder: 0,
      delete_pages: 0,
      protect: 0,
      unlock: 0,
    });
  });
});

describe("inputs", () => {
  test("merge takes 2 to 50 file_ids, never file_id", () => {
    fails(() => checkRequestShape({ operation: "merge", file_ids: [F1] }), "validation_error", "file_ids");
    fails(() => checkRequestShape({ operation: "merge", file_ids: [] }), "validation_error", "file_ids");
    fails(() => checkRequestShape({ operation: "merge" }), "validation_error", "file_ids");
    fails(
      () => checkRequestShape({ operation: "merge", file_ids: Array(51).fill(F1) }),
      "validation_error",
      "file_ids",
    );
    fails(
      () => checkRequestShape({ operation: "merge", file_id: F1, file_ids: [F1, F2] }),
      "validation_error",
      "file_id",
    );
    expect(checkRequestShape({ operation: "merge", file_ids: [F1, F2] }).fileIds).toEqual([F1, F2]);
    expect(checkRequestShape({ operation: "merge", file_ids: Array(50).fill(F1) }).fileIds.length).toBe(50);
  });

  test("single-input operations need file_id and refuse file_ids", () => {
    fails(() => checkRequestShape({ operation: "rotate", options: { degrees: 90 } }), "validation_error", "file_id");
    fails(
      () => checkRequestShape({ operation: "rotate", file_id: null, options: { degrees: 90 } }),
      "validation_error",
      "file_id",
    );
    fails(
      () => checkRequestShape({ operation: "rotate", file_id: F1, file_ids: [F2], options: { degrees: 90 } }),
      "validation_error",
      "file_ids",
    );
    // An empty or null file_ids next to file_id is harmless.
    expect(
      checkRequestShape({ operation: "rotate", file_id: F1, file_ids: [], options: { degrees: 90 } }).fileIds,
    ).toEqual([F1]);
    expect(
      checkRequestShape({ operation: "rotate", file_id: F1, file_ids: null, options: { degrees: 90 } }).fileIds,
    ).toEqual([F1]);
  });

  test("page operations need PDF input: another kind is unsupported_file_type", () => {
    for (const kind of ["docx", "png", "csv"]) {
      fails(
        () => plan({ operation: "rotate", file_id: F1, options: { degrees: 90 } }, [pdf(1, F1, kind)]),
        "unsupported_file_type",
        "file_id",
      );
    }
    fails(
      () => plan({ operation: "merge", file_ids: [F1, F2] }, [pdf(2, F1), pdf(1, F2, "jpeg")]),
      "unsupported_file_type",
      "file_ids",
    );
  });
});

describe("options", () => {
  test("rotate: degrees must be 90, 180 or 270", () => {
    for (const degrees of [45, 0, 360, -90, "90", 90.5, null]) {
      fails(
        () => checkRequestShape({ operation: "rotate", file_id: F1, options: { degrees } }),
        "invalid_options",
        "options.degrees",
      );
    }
    fails(
      () => checkRequestShape({ operation: "rotate", file_id: F1, options: {} }),
      "invalid_options",
      "options.degrees",
    );
    fails(() => checkRequestShape({ operation: "rotate", file_id: F1 }), "invalid_options", "options.degrees");
    for (const degrees of [90, 180, 270])
      expect(plan({ operation: "rotate", file_id: F1, options: { degrees } }).options.degrees).toBe(degrees);
  });

  test("an unknown option names itself", () => {
    fails(
      () => checkRequestShape({ operation: "rotate", file_id: F1, options: { degrees: 90, angle: 90 } }),
      "invalid_options",
      "options.angle",
    );
    fails(
      () => checkRequestShape({ operation: "merge", file_ids: [F1, F2], options: { order: [1, 0] } }),
      "invalid_options",
      "options.order",
    );
    fails(
      () => checkRequestShape({ operation: "unlock", file_id: F1, options: { pasword: "x" } }),
      "invalid_options",
      "options.pasword",
    );
  });

  test("page indexes are 0-based, unique, non-negative and inside the document", () => {
    fails(
      () => checkRequestShape({ operation: "rotate", file_id: F1, options: { degrees: 90, pages: [-1] } }),
      "invalid_options",
      "options.pages[0]",
    );
    fails(
      () => checkRequestShape({ operation: "rotate", file_id: F1, options: { degrees: 90, pages: [1, 1] } }),
      "invalid_options",
      "options.pages",
    );
    fails(
      () => plan({ operation: "rotate", file_id: F1, options: { degrees: 90, pages: [4] } }),
      "invalid_options",
      "options.pages",
    );
    expect(plan({ operation: "rotate", file_id: F1, options: { degrees: 90, pages: [0, 3] } }).options.pages).toEqual([
      0, 3,
    ]);
  });

  test("reorder: order must be a full permutation of the page indexes", () => {
    fails(
      () => plan({ operation: "reorder", file_id: F1, options: { order: [0, 0, 1, 2] } }),
      "invalid_options",
      "options.order",
    );
    fails(
      () => plan({ operation: "reorder", file_id: F1, options: { order: [0, 1, 2] } }),
      "invalid_options",
      "options.order",
    );
    fails(
      () => plan({ operation: "reorder", file_id: F1, options: { order: [0, 1, 2, 3, 4] } }),
      "invalid_options",
      "options.order",
    );
    fails(
      () => plan({ operation: "reorder", file_id: F1, options: { order: [1, 2, 3, 4] } }),
      "invalid_options",
      "options.order",
    );
    fails(() => plan({ operation: "reorder", file_id: F1, options: {} }), "invalid_options", "options.order");
    fails(
      () => plan({ operation: "reorder", file_id: F1, options: { order: [] } }),
      "invalid_options",
      "options.order",
    );
    expect(plan({ operation: "reorder", file_id: F1, options: { order: [3, 2, 1, 0] } }).options.order).toEqual([
      3, 2, 1, 0,
    ]);
  });

  test("delete_pages: deleting every page is invalid_options; indexes must exist", () => {
    fails(
      () => plan({ operation: "delete_pages", file_id: F1, options: { pages: [0, 1, 2, 3] } }),
      "invalid_options",
      "options.pages",
    );
    fails(
      () => plan({ operation: "delete_pages", file_id: F1, options: { pages: [3, 2, 1, 0] } }),
      "invalid_options",
      "options.pages",
    );
    fails(
      () => plan({ operation: "delete_pages", file_id: F1, options: { pages: [0] } }, [pdf(1)]),
      "invalid_options",
      "options.pages",
    );
    fails(
      () => plan({ operation: "delete_pages", file_id: F1, options: { pages: [7] } }),
      "invalid_options",
      "options.pages",
    );
    fails(
      () => plan({ operation: "delete_pages", file_id: F1, options: { pages: [] } }),
      "invalid_options",
      "options.pages",
    );
    fails(() => plan({ operation: "delete_pages", file_id: F1, options: {} }), "invalid_options", "options.pages");
    expect(plan({ operation: "delete_pages", file_id: F1, options: { pages: [0, 2] } }).options.pages).toEqual([0, 2]);
  });

  test("split: mode defaults to every_page; ranges are 1-based pairs inside the document", () => {
    expect(plan({ operation: "split", file_id: F1 }).options.mode).toBe("every_page");
    fails(
      () => plan({ operation: "split", file_id: F1, options: { mode: "ranges", ranges: [[1, 5]] } }),
      "invalid_options",
      "options.ranges[0]",
    );
    fails(
      () =>
        plan({
          operation: "split",
          file_id: F1,
          options: {
            mode: "ranges",
            ranges: [
              [1, 2],
              [3, 2],
            ],
          },
        }),
      "invalid_options",
      "options.ranges[1]",
    );
    fails(
      () => plan({ operation: "split", file_id: F1, options: { mode: "ranges", ranges: [[0, 2]] } }),
      "invalid_options",
      "options.ranges[0][0]",
    );
    fails(
      () => plan({ operation: "split", file_id: F1, options: { mode: "ranges", ranges: [[1]] } }),
      "invalid_options",
    );
    fails(
      () => plan({ operation: "split", file_id: F1, options: { mode: "ranges" } }),
      "invalid_options",
      "options.ranges",
    );
    fails(
      () => plan({ operation: "split", file_id: F1, options: { mode: "ranges", ranges: [] } }),
      "invalid_options",
      "options.ranges",
    );
    fails(
      () => plan({ operation: "split", file_id: F1, options: { ranges: [[1, 2]] } }),
      "invalid_options",
      "options.ranges",
    );
    fails(
      () => plan({ operation: "split", file_id: F1, options: { mode: "bogus" } }),
      "invalid_options",
      "options.mode",
    );
    expect(
      plan({
        operation: "split",
        file_id: F1,
        options: {
          mode: "ranges",
          ranges: [
            [1, 2],
            [4, 4],
            [2, 3],
          ],
        },
      }).options.ranges,
    ).toEqual([
      [1, 2],
      [4, 4],
      [2, 3],
    ]);
  });

  test("split: chunk_size goes with mode chunks only, and is at least 1", () => {
    fails(
      () => plan({ operation: "split", file_id: F1, options: { mode: "chunks" } }),
      "invalid_options",
      "options.chunk_size",
    );
    fails(
      () => plan({ operation: "split", file_id: F1, options: { mode: "chunks", chunk_size: 0 } }),
      "invalid_options",
      "options.chunk_size",
    );
    fails(
      () => plan({ operation: "split", file_id: F1, options: { chunk_size: 2 } }),
      "invalid_options",
      "options.chunk_size",
    );
    expect(plan({ operation: "split", file_id: F1, options: { mode: "chunks", chunk_size: 3 } }).options).toEqual({
      mode: "chunks",
      chunk_size: 3,
    });
  });

  test("protect: at least one password; permissions are booleans", () => {
    fails(() => plan({ operation: "protect", file_id: F1, options: {} }), "invalid_options", "options.user_password");
    fails(
      () => plan({ operation: "protect", file_id: F1, options: { allow_print: false } }),
      "invalid_options",
      "options.user_password",
    );
    fails(
      () => plan({ operation: "protect", file_id: F1, options: { user_password: "" } }),
      "invalid_options",
      "options.user_password",
    );
    fails(
      () => plan({ operation: "protect", file_id: F1, options: { user_password: "x".repeat(128) } }),
      "invalid_options",
      "options.user_password",
    );
    fails(
      () => plan({ operation: "protect", file_id: F1, options: { owner_password: "o", allow_copy: "no" } }),
      "invalid_options",
      "options.allow_copy",
    );
    expect(
      plan({ operation: "protect", file_id: F1, options: { owner_password: "o", allow_print: false } }).options,
    ).toEqual({ owner_password: "o", allow_print: false });
  });

  test("unlock: the password is optional (needed only when the file asks for one)", () => {
    expect(plan({ operation: "unlock", file_id: F1 }, [pdf(null)]).options).toEqual({});
    expect(
      plan({ operation: "unlock", file_id: F1, options: { password: "pässwört" } }, [pdf(null)]).options.password,
    ).toBe("pässwört");
    fails(
      () => plan({ operation: "unlock", file_id: F1, options: { password: 5 } }, [pdf(null)]),
      "invalid_options",
      "options.password",
    );
  });

  test("page-based checks are skipped when the page count is unknown (encrypted input)", () => {
    expect(plan({ operation: "reorder", file_id: F1, options: { order: [1, 0] } }, [pdf(null)]).pagesEstimated).toBe(1);
    expect(
      plan({ operation: "delete_pages", file_id: F1, options: { pages: [0] } }, [pdf(null)]).options.pages,
    ).toEqual([0]);
  });

  test("pdfa (extension) is 2b only, and on ocr only with output searchable_pdf", () => {
    for (const options of [{ pdfa: "2b" }, { output: "blocks", pdfa: "2b" }, { output: "alto", pdfa: "2b" }])
      fails(() => plan({ operation: "ocr", file_id: F1, options }), "invalid_options", "options.pdfa");
    for (const pdfa of ["1b", "2a", "2u", "", 2, true])
      fails(
        () => checkRequestShape({ operation: "searchable_pdf", file_id: F1, options: { pdfa } }),
        "invalid_options",
        "options.pdfa",
      );
    expect(
      plan({ operation: "ocr", file_id: F1, options: { output: "searchable_pdf", pdfa: "2b" } }).options.pdfa,
    ).toBe("2b");
    expect(plan({ operation: "searchable_pdf", file_id: F1, options: { pdfa: "2b" } }).options.pdfa).toBe("2b");
  });

  test("rotate_pages and deskew (extensions) are booleans, and on ocr only with output searchable_pdf", () => {
    for (const name of ["rotate_pages", "deskew"]) {
      for (const options of [{ [name]: true }, { output: "blocks", [name]: false }, { output: "hocr", [name]: true }])
        fails(() => plan({ operation: "ocr", file_id: F1, options }), "invalid_options", `options.${name}`);
      for (const value of ["true", 1, null])
        fails(
          () => checkRequestShape({ operation: "searchable_pdf", file_id: F1, options: { [name]: value } }),
          "invalid_options",
          `options.${name}`,
        );
      const given = { output: "searchable_pdf", [name]: false };
      expect(plan({ operation: "ocr", file_id: F1, options: given }).options).toEqual(given);
      expect(plan({ operation: "searchable_pdf", file_id: F1, options: { [name]: true } }).options).toEqual({
        [name]: true,
      });
    }
    // Absent, the worker runs with the defaults: rotate_pages true, deskew false.
    const filled = withDefaults("searchable_pdf", {});
    expect([filled.rotate_pages, filled.deskew]).toEqual([true, false]);
  });

  test("ocr outputs hocr and alto (extensions) are accepted", () => {
    for (const output of ["hocr", "alto"])
      expect(plan({ operation: "ocr", file_id: F1, options: { output } }).options.output).toBe(output);
  });

  test("a normalised copy is returned: the request's options object is not mutated", () => {
    const options = {};
    const p = plan({ operation: "split", file_id: F1, options });
    expect(p.options.mode).toBe("every_page");
    expect(options).toEqual({});
  });
});

describe("pages estimated", () => {
  test("from the file's page count for single-input operations", () => {
    expect(plan({ operation: "rotate", file_id: F1, options: { degrees: 90 } }, [pdf(17)]).pagesEstimated).toBe(17);
    // Rotating a subset still rewrites the whole document.
    expect(
      plan({ operation: "rotate", file_id: F1, options: { degrees: 90, pages: [0] } }, [pdf(17)]).pagesEstimated,
    ).toBe(17);
    expect(plan({ operation: "split", file_id: F1 }, [pdf(9)]).pagesEstimated).toBe(9);
    expect(plan({ operation: "protect", file_id: F1, options: { user_password: "u" } }, [pdf(3)]).pagesEstimated).toBe(
      3,
    );
  });

  test("merge sums its inputs", () => {
    expect(plan({ operation: "merge", file_ids: [F1, F2] }, [pdf(4, F1), pdf(30, F2)]).pagesEstimated).toBe(34);
    expect(plan({ operation: "merge", file_ids: [F1, F1] }, [pdf(4, F1), pdf(4, F1)]).pagesEstimated).toBe(8);
  });

  test("an unknown page count (encrypted) counts as one page", () => {
    expect(plan({ operation: "unlock", file_id: F1, options: { password: "p" } }, [pdf(null)]).pagesEstimated).toBe(1);
  });

  test("the plan keeps file_ids in request order", () => {
    expect(plan({ operation: "merge", file_ids: [F2, F1] }, [pdf(1, F2), pdf(2, F1)]).fileIds).toEqual([F2, F1]);
  });
});
