// The API spec (docs/api.md), Files: accepted types are PDF, DOCX, XLSX, CSV, JPEG, PNG, WebP, and the bytes must
// match the declared type. src/domain/file-types.ts decides the declared kind (a specific part
// Content-Type wins, a generic one defers to the filename extension) and the 415 reason.
import { describe, expect, test } from "bun:test";
import { acceptedKinds, contentTypeOf, declaredKind, typeMismatch } from "../../src/domain/file-types";

describe("declaredKind", () => {
  test("a specific Content-Type decides, whatever the extension", () => {
    expect(declaredKind("application/pdf", "scan.png")).toEqual({ kind: "pdf" });
    expect(declaredKind("image/png", "x.pdf")).toEqual({ kind: "png" });
    expect(declaredKind("image/jpg", "x")).toEqual({ kind: "jpeg" });
    expect(declaredKind("image/jpeg", "x")).toEqual({ kind: "jpeg" });
    expect(declaredKind("image/webp", "x")).toEqual({ kind: "webp" });
    expect(declaredKind("text/csv", "x.txt")).toEqual({ kind: "csv" });
    expect(declaredKind("application/vnd.openxmlformats-officedocument.wordprocessingml.document", "a")).toEqual({
      kind: "docx",
    });
    expect(declaredKind("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "a")).toEqual({
      kind: "xlsx",
    });
  });

  test("Content-Type parameters and case are ignored", () => {
    expect(declaredKind("Application/PDF; charset=binary", "x")).toEqual({ kind: "pdf" });
    expect(declaredKind("text/csv;charset=utf-8", "x")).toEqual({ kind: "csv" });
  });

  test("a specific but unaccepted Content-Type is refused with a reason", () => {
    for (const mime of ["image/tiff", "application/msword", "image/gif", "text/html"]) {
      const d = declaredKind(mime, "x.pdf");
      expect(d.kind).toBeNull();
      expect((d as { reason: string }).reason).toContain(mime);
    }
  });

  test("a generic Content-Type defers to the extension (case-insensitive)", () => {
    for (const generic of [
      "",
      "application/octet-stream",
      "binary/octet-stream",
      "application/zip",
      "text/plain",
      "application/x-zip-compressed",
    ]) {
      expect(declaredKind(generic, "Report.PDF")).toEqual({ kind: "pdf" });
      expect(declaredKind(generic, "a.docx")).toEqual({ kind: "docx" });
      expect(declaredKind(generic, "a.jpg")).toEqual({ kind: "jpeg" });
      expect(declaredKind(generic, "a.jpeg")).toEqual({ kind: "jpeg" });
    }
  });

  test("an unaccepted extension is refused; no extension accepts whatever the bytes are", () => {
    const d = declaredKind("application/octet-stream", "scan.tif");
    expect(d.kind).toBeNull();
    expect((d as { reason: string }).reason).toContain(".tif");
    expect(declaredKind("application/octet-stream", "upload")).toEqual({ kind: "any" });
    expect(declaredKind("", "")).toEqual({ kind: "any" });
  });
});

describe("typeMismatch", () => {
  test("bytes of an unaccepted kind are refused whatever was declared", () => {
    for (const d of [{ kind: "pdf" as const }, { kind: "any" as const }]) {
      expect(typeMismatch(d, "unknown")).toContain("not a PDF");
    }
  });

  test("declared and sniffed kinds must agree", () => {
    expect(typeMismatch({ kind: "pdf" }, "png")).toBe("the file is declared as pdf but its bytes are png");
    expect(typeMismatch({ kind: "docx" }, "xlsx")).toContain("declared as docx");
    for (const k of acceptedKinds) expect(typeMismatch({ kind: k }, k)).toBeNull();
  });

  test("an undeclared type accepts any accepted kind; a refused declaration keeps its reason", () => {
    for (const k of acceptedKinds) expect(typeMismatch({ kind: "any" }, k)).toBeNull();
    expect(typeMismatch({ kind: null, reason: "the .tif extension is not an accepted type" }, "pdf")).toBe(
      "the .tif extension is not an accepted type",
    );
  });

  test("the accepted kinds are exactly the spec's seven, each with a canonical content type", () => {
    expect([...acceptedKinds].sort()).toEqual(["csv", "docx", "jpeg", "pdf", "png", "webp", "xlsx"]);
    for (const k of acceptedKinds) expect(declaredKind(contentTypeOf[k], "x")).toEqual({ kind: k });
  });
});
