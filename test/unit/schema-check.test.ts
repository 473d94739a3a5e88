// src/domain/schema-check.ts and src/modules/common/read-request.ts (issue 2: malformed bodies and parameters answer 422 validation_error,
// unknown fields are rejected, integers are integers, `param` names the field).
import { describe, expect, test } from "bun:test";
import { Type as T } from "@sinclair/typebox";
import { check, pointerToParam, refusalHints } from "../../src/domain/schema-check";
import { checkQuery, readJson } from "../../src/modules/common/read-request";
import { ApiError } from "../../src/domain/errors";

function fails(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error("expected an ApiError");
}

async function failsAsync(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error("expected an ApiError");
}

describe("pointerToParam", () => {
  test.each([
    ["", "", null],
    ["/", "", null],
    ["/name", "", "name"],
    ["/options/dpi", "", "options.dpi"],
    ["/options/regions/0/x", "", "options.regions[0].x"],
    ["/0", "", "[0]"],
    ["/file_ids/12", "", "file_ids[12]"],
    ["/ranges/1/0", "", "ranges[1][0]"],
    ["/dpi", "options", "options.dpi"],
    ["", "options", "options"],
    ["/regions/2/w", "options", "options.regions[2].w"],
  ] as const)("%p with prefix %p -> %p", (path, prefix, expected) => {
    expect(pointerToParam(path, prefix)).toBe(expected);
  });
});

describe("check (JSON bodies)", () => {
  const Region = T.Object({ page: T.Integer({ minimum: 0 }), x: T.Number() }, { additionalProperties: false });
  const Body = T.Object(
    {
      operation: T.String({ minLength: 1 }),
      count: T.Optional(T.Integer({ minimum: 1, maximum: 10 })),
      options: T.Optional(
        T.Object({ regions: T.Array(Region), dpi: T.Optional(T.Integer()) }, { additionalProperties: false }),
      ),
    },
    { additionalProperties: false },
  );

  test("a valid value is returned unchanged", () => {
    const v = { operation: "ocr", count: 2, options: { regions: [{ page: 0, x: 1.5 }] } };
    expect(check(Body, v)).toBe(v);
  });

  test("errors are 422 validation_error ApiErrors", () => {
    const e = fails(() => check(Body, {}));
    expect(e.code).toBe("validation_error");
    expect(e.status).toBe(422);
  });

  test("an unknown top-level field is rejected and named", () => {
    const e = fails(() => check(Body, { operation: "ocr", colour: "red" }));
    expect(e.param).toBe("colour");
    expect(e.message).toContain("colour");
  });

  test("an unknown nested field is rejected and named with its path", () => {
    expect(fails(() => check(Body, { operation: "ocr", options: { regions: [], zoom: 2 } })).param).toBe(
      "options.zoom",
    );
    expect(
      fails(() =>
        check(Body, {
          operation: "ocr",
          options: {
            regions: [
              { page: 0, x: 0 },
              { page: 1, x: 0, y: 3 },
            ],
          },
        }),
      ).param,
    ).toBe("options.regions[1].y");
  });

  test('integers are integers: "1", 1.5, true, null and [1] are refused and named', () => {
    for (const count of ["1", 1.5, true, null, [1], "", {}]) {
      expect({ count, param: fails(() => check(Body, { operation: "ocr", count })).param }).toEqual({
        count,
        param: "count",
      });
    }
    expect(fails(() => check(Body, { operation: "ocr", options: { regions: [{ page: "0", x: 1 }] } })).param).toBe(
      "options.regions[0].page",
    );
  });

  test("a missing required field and out-of-range values are named", () => {
    expect(fails(() => check(Body, { count: 1 })).param).toBe("operation");
    expect(fails(() => check(Body, { operation: "" })).param).toBe("operation");
    expect(fails(() => check(Body, { operation: "ocr", count: 0 })).param).toBe("count");
    expect(fails(() => check(Body, { operation: "ocr", count: 11 })).param).toBe("count");
  });

  test("a body that is not an object is refused without naming a bogus field", () => {
    for (const v of [null, [], [1, 2], "text", 3, true]) {
      const e = fails(() => check(Body, v));
      expect({ v, code: e.code, param: e.param }).toEqual({ v, code: "validation_error", param: null });
    }
  });

  test("a nested value of the wrong kind is named by its own path", () => {
    expect(fails(() => check(Body, { operation: "ocr", options: [1] })).param).toBe("options");
    expect(fails(() => check(Body, { operation: "ocr", options: { regions: {} } })).param).toBe("options.regions");
  });

  test("paramPrefix and the invalid_options code are passed through", () => {
    const Opts = T.Object({ dpi: T.Integer() }, { additionalProperties: false });
    const e = fails(() => check(Opts, { dpi: "300" }, "options", "invalid_options"));
    expect(e.code).toBe("invalid_options");
    expect(e.param).toBe("options.dpi");
    expect(fails(() => check(Opts, { dpi: 1, x: 1 }, "options", "invalid_options")).param).toBe("options.x");
  });

  test("formats are checked: uuid and date-time", () => {
    const S = T.Object({ id: T.String({ format: "uuid" }) }, { additionalProperties: false });
    expect(check(S, { id: "6f1c1a52-3f7e-4d7e-9a59-2f6f1d6f0c11" })).toBeTruthy();
    expect(fails(() => check(S, { id: "not-a-uuid" })).param).toBe("id");
  });
});

describe("checkQuery (query strings)", () => {
  const Q = T.Object(
    {
      limit: T.Optional(T.Integer({ minimum: 1, maximum: 100 })),
      ratio: T.Optional(T.Number()),
      flag: T.Optional(T.Boolean()),
      status: T.Optional(T.Union([T.Literal("queued"), T.Literal("running")])),
      starting_after: T.Optional(T.String({ format: "uuid" })),
    },
    { additionalProperties: false },
  );
  const q = (s: string) => new URLSearchParams(s);

  test("without a schema, any parameter is unknown", () => {
    expect(checkQuery(undefined, q(""))).toEqual({});
    const e = fails(() => checkQuery(undefined, q("expand=all")));
    expect(e.code).toBe("validation_error");
    expect(e.param).toBe("expand");
    expect(e.message).toMatch(/Unknown query parameter/);
  });

  test("unknown parameters are rejected and named", () => {
    expect(fails(() => checkQuery(Q, q("limit=5&page=2"))).param).toBe("page");
  });

  test("a repeated parameter is rejected", () => {
    expect(fails(() => checkQuery(Q, q("limit=5&limit=6"))).param).toBe("limit");
  });

  test("integers: plain decimal digits become numbers; anything else is refused and named", () => {
    expect(checkQuery(Q, q("limit=5"))).toEqual({ limit: 5 });
    expect(checkQuery(Q, q("limit=100"))).toEqual({ limit: 100 });
    for (const v of [
      "abc",
      "1.5",
      "1e1",
      "",
      " 5",
      "5 ",
      "0x10",
      "+5",
      "0",
      "101",
      "-1",
      "9999999999999999",
      "Infinity",
      "NaN",
    ]) {
      expect({ v, param: fails(() => checkQuery(Q, q(`limit=${encodeURIComponent(v)}`))).param }).toEqual({
        v,
        param: "limit",
      });
    }
  });

  test("numbers accept decimals; booleans only true/false", () => {
    expect(checkQuery(Q, q("ratio=0.5&flag=false"))).toEqual({ ratio: 0.5, flag: false });
    expect(checkQuery(Q, q("flag=true"))).toEqual({ flag: true });
    for (const v of ["1", "yes", "TRUE", ""]) expect(fails(() => checkQuery(Q, q(`flag=${v}`))).param).toBe("flag");
    expect(fails(() => checkQuery(Q, q("ratio=half"))).param).toBe("ratio");
  });

  test("strings and enums are validated as strings", () => {
    expect(checkQuery(Q, q("status=queued"))).toEqual({ status: "queued" });
    expect(fails(() => checkQuery(Q, q("status=done"))).param).toBe("status");
    expect(fails(() => checkQuery(Q, q("starting_after=123"))).param).toBe("starting_after");
  });
});

describe("readJson", () => {
  const req = (body: string | undefined, type?: string) =>
    new Request("http://x/api/v1/jobs", { method: "POST", body, headers: type ? { "content-type": type } : {} });

  test("parses JSON sent as application/json (with or without a charset)", async () => {
    expect(await readJson(req('{"a":1}', "application/json"))).toEqual({ a: 1 });
    expect(await readJson(req('{"a":1}', "Application/JSON; charset=utf-8"))).toEqual({ a: 1 });
  });

  test("refuses other or missing content types", async () => {
    for (const type of [undefined, "text/plain", "application/x-www-form-urlencoded", "application/json-patch+json"]) {
      const e = await failsAsync(readJson(req('{"a":1}', type)));
      expect({ type, code: e.code, param: e.param }).toEqual({ type, code: "validation_error", param: null });
    }
  });

  test("refuses empty, malformed and oversized bodies", async () => {
    for (const body of ["", "   ", "{", "{'a':1}", "[1,]", "undefined"]) {
      expect({ body, code: (await failsAsync(readJson(req(body, "application/json")))).code }).toEqual({
        body,
        code: "validation_error",
      });
    }
    const big = JSON.stringify({ s: "x".repeat(1024 * 1024) });
    expect((await failsAsync(readJson(req(big, "application/json")))).message).toMatch(/1 MB/);
  });
});

describe("enumerations", () => {
  test("a value outside a union of constants is refused naming the accepted values", () => {
    const schema = T.Object(
      { codes: T.Array(T.Union([T.Literal("eng"), T.Literal("jpn")])) },
      { additionalProperties: false },
    );
    const e = fails(() => check(schema, { codes: ["jpn", "kor"] }, "options", "invalid_options"));
    expect(e.code).toBe("invalid_options");
    expect(e.param).toBe("options.codes[1]");
    expect(e.message).toBe('`options.codes[1]`: "kor" is not supported; expected one of eng, jpn.');
  });

  test("an enumeration with a refusal hint says it beside the accepted values", () => {
    const code = T.Union([T.Literal("eng"), T.Literal("jpn")]);
    refusalHints.set(code, (v) => `install ${String(v)}`);
    const schema = T.Object({ codes: T.Array(code) }, { additionalProperties: false });
    const e = fails(() => check(schema, { codes: ["kor"] }, "options", "invalid_options"));
    expect(e.message).toBe('`options.codes[0]`: "kor" is not supported (install kor); expected one of eng, jpn.');
  });
});
