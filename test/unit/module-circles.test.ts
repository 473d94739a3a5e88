// Rule (docs/engine.md, "Checking the structure"): no two files of a Rust crate or of the engine's
// C shims refer to each other, directly or round a longer loop. Rust: the module paths from
// `crate::`, `super::` and `self::`; C: includes, and calls of a function another file defines.
import { describe, expect, test } from "bun:test";
import { cUnitGraph, cycles, expandUseTree, type Graph, rustModuleGraph } from "../support/module-graph";

const crates = ["crates/engine/src", "crates/engine-node/src", "crates/ocr/src"];

describe("Rust modules and C files form no circle", () => {
  test("the graphs see a use circle and a call circle", () => {
    expect(expandUseTree("super::{fields, bitonal::{self, Bitonal as B}}")).toEqual([
      "super::fields",
      "super::bitonal::self",
      "super::bitonal::Bitonal",
    ]);
    const loop: Graph = new Map([
      ["a.rs", new Set(["b.rs"])],
      ["b.rs", new Set(["a.rs"])],
    ]);
    expect(cycles(loop)).toEqual([["a.rs", "b.rs", "a.rs"]]);
  });

  test("the Rust graph follows super:: to a sibling module's file", () => {
    const g = rustModuleGraph("crates/engine/src");
    expect(g.get("crates/engine/src/pagework/compress/bitonal.rs")).toContain(
      "crates/engine/src/pagework/compress/ffi.rs",
    );
    expect(g.get("crates/engine/src/convert/docx/extract.rs")).toContain("crates/engine/src/convert/docx/unmapped.rs");
  });

  test("the C graph follows includes and calls to the defining file", () => {
    const g = cUnitGraph("crates/engine/csrc");
    expect(g.get("crates/engine/csrc/compress")).toContain("crates/engine/csrc/compress_images");
    expect(g.get("crates/engine/csrc/compress")).toContain("crates/engine/csrc/compressor");
  });

  for (const src of crates) {
    test(`no module files of ${src} refer to each other in a circle`, () => {
      const g = rustModuleGraph(src);
      expect(g.size).toBeGreaterThan(3);
      expect(cycles(g)).toEqual([]);
    });
  }

  test("no files of crates/engine/csrc include or call each other in a circle", () => {
    const g = cUnitGraph("crates/engine/csrc");
    expect(g.size).toBeGreaterThan(10);
    expect(cycles(g)).toEqual([]);
  });
});
