// The OCR language set's selection rule (scripts/bench/ocr-lang-set.ts) and the checks the
// ocr-lang bench judges it with (scripts/bench/ocr-lang.bench.ts).
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { buildPages, langStrings, selectStrings, splitOf, TEXT_DOMAINS } from "../../scripts/bench/ocr-lang-set";
import {
  insertedSpaces,
  langCer,
  logicalOrder,
  reverseLines,
  sameLines,
  withoutBidiMarks,
} from "../../scripts/bench/ocr-lang.bench";

describe("selection rule", () => {
  test("a string's half is the first byte of the sha256 of its msgid (>= 128: report)", () => {
    for (const id of ["Open the file", "The text of the label", "Whether the widget is visible", "x"]) {
      const b = createHash("sha256").update(id).digest()[0]!;
      expect(splitOf(id)).toBe(b >= 128 ? "report" : "tune");
    }
  });

  test("format strings, markup, mnemonics, untranslated copies, short strings and other scripts are dropped", () => {
    const kept = selectStrings("deu", [
      ["Whether the widget is visible", "Legt fest, ob das Widget sichtbar ist"],
      ["Could not open %s", "Konnte %s nicht öffnen, sagte das Programm"],
      ["<b>Name</b> of the thing", "<b>Name</b> des Dinges und noch mehr Text"],
      ["_Open the file in a window", "Datei in einem Fenster _öffnen"],
      ["Untranslated long string here", "Untranslated long string here"],
      ["Too short", "Zu kurz"],
      ["A sentence in another script", "Предложение на другом языке здесь"],
      ["Numbers 1234567890 only mostly", "Zahlen 1234567890 123456 fast nur"],
    ]);
    expect(kept.map((s) => s.text)).toEqual(["Legt fest, ob das Widget sichtbar ist"]);
  });

  test("whitespace runs become one space and the first of equal translations is kept", () => {
    const kept = selectStrings("deu", [
      ["First source string here", "Ein  Satz\nmit Umbruch, der bleibt"],
      ["Second source string here", "Ein Satz mit Umbruch, der bleibt"],
    ]);
    expect(kept).toHaveLength(1);
    expect(kept[0]!.msgid).toBe("First source string here");
    expect(kept[0]!.text).toBe("Ein Satz mit Umbruch, der bleibt");
  });

  test("right-to-left and Indic strings are kept by their script's letters and marks", () => {
    expect(selectStrings("ara", [["The text of the label", "نص العلامة المعروض هنا"]])).toHaveLength(1);
    expect(selectStrings("hin", [["The text of the label", "लेबल का पाठ जो दिखाया जाता है"]])).toHaveLength(1);
    expect(selectStrings("hin", [["The text of the label", "نص العلامة المعروض هنا"]])).toHaveLength(0);
  });

  const strings = Array.from({ length: 400 }, (_, i) => ({
    msgid: `source string number ${i}`,
    text: `Übersetzung Nummer ${"abcdefghij"[i % 10]} mit etwas Text dazu`,
    split: splitOf(`source string number ${i}`),
  }));

  test("pages hold strings of one half only, in an order that does not depend on the input's", () => {
    const pages = buildPages("deu", strings, "report", 2);
    expect(pages).toHaveLength(2);
    const shuffled = [...strings].sort(
      (a, b) => (a.msgid.length % 3) - (b.msgid.length % 3) || (a.msgid < b.msgid ? 1 : -1),
    );
    expect(buildPages("deu", shuffled, "report", 2)).toEqual(pages);
    const tune = new Set(buildPages("deu", strings, "tune", 2).flat());
    for (const p of pages.flat()) expect(tune.has(p)).toBe(false);
    for (const p of pages) expect(p.join(" ").length).toBeGreaterThanOrEqual(1000);
  });

  test("Chinese and Japanese strings are joined without spaces", () => {
    const zh = Array.from({ length: 200 }, (_, i) => ({
      msgid: `id ${i}`,
      text: `文本标签第${i}号`,
      split: splitOf(`id ${i}`),
    }));
    for (const p of buildPages("chi_sim", zh, "report", 1)[0]!) expect(p).not.toContain(" ");
  });

  test("a language without enough strings gives no full pages, and one without any none", () => {
    expect(buildPages("deu", strings.slice(0, 3), "report", 2).length).toBeLessThanOrEqual(1);
    expect(buildPages("lat", [], "report", 2)).toEqual([]);
  });

  const catalog = `/usr/share/locale/de/LC_MESSAGES/${TEXT_DOMAINS[0]!.domain}.mo`;
  test.skipIf(!existsSync(catalog))(`installed German catalogs give report and tune pages (needs ${catalog})`, () => {
    const s = langStrings("deu");
    expect(s.length).toBeGreaterThan(100);
    expect(buildPages("deu", s, "report", 2)).toHaveLength(2);
    expect(buildPages("deu", s, "tune", 2)).toHaveLength(2);
  });
  if (!existsSync(catalog)) console.warn(`skipped: ${catalog} missing (Debian ${TEXT_DOMAINS[0]!.pkg})`);
});

describe("checks", () => {
  test("inserted spaces count spaces inside a line, not line breaks or spaces of the reference", () => {
    expect(insertedSpaces("มนุษย์ทั้งหลายเกิดมา", "มนุษย์ทั้ง หลายเกิดมา")).toBe(1);
    expect(insertedSpaces("มนุษย์ทั้งหลายเกิดมา", "มนุษย์ทั้ง\nหลายเกิดมา")).toBe(0);
    expect(insertedSpaces("सभी मनुष्यों को", "सभी मनु ष्यों को")).toBe(1);
    expect(insertedSpaces("人人生而自由", "人 人 生而自由")).toBe(2);
  });

  test("right-to-left text read in visual order is not logical order", () => {
    const ref = "يولد جميع الناس أحرارا\nمتساوين في الكرامة والحقوق";
    expect(logicalOrder("ara", ref, ref)).toBe(true);
    expect(logicalOrder("ara", ref, reverseLines(ref))).toBe(false);
  });

  test("a text layer reads back as the JSON when its non-empty lines match, bidi marks aside", () => {
    expect(sameLines("a  b\n\n c\n", "a b\nc")).toBe(true);
    expect(sameLines("a b c", "a b\nc")).toBe(false);
    expect(sameLines("ab c", "a b c")).toBe(false);
    const poppler = "\u202Bשלום עולם\u202C\n\u202Bעמוד \u202A16\u202C\u202C";
    expect(sameLines(withoutBidiMarks(poppler), "שלום עולם\nעמוד 16")).toBe(true);
    expect(sameLines(poppler, "שלום עולם\nעמוד 16")).toBe(false);
  });

  test("CER of CJK ignores whitespace, of others collapses it", () => {
    expect(langCer("jpn", "人人生而自由", "人人 生而\n自由")).toBe(0);
    expect(langCer("deu", "ein  Satz", "ein Satz")).toBe(0);
    expect(langCer("deu", "ein Satz", "einSatz")).toBeGreaterThan(0);
  });
});
