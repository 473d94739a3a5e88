// The engine's comparison and diagnostic switches, read from the environment by the bench
// processes that load the addon (ocr-child.ts), never by the service: src/config.ts holds only
// what an operator sets. The Rust examples the other benches run (crates/engine/examples,
// crates/ocr/examples) read the same variables themselves. Import this module before the
// engine is first used: it hands the switches over at import.
import { type EngineExperiments, useEngineExperiments } from "../../src/engine/native";

function flag(name: string): string | undefined {
  const v = process.env[name];
  return v === undefined || v === "" ? undefined : v;
}

function number(name: string): number | undefined {
  const v = flag(name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got "${v}"`);
  return n;
}

/** The switches, as docs/engine.md lists them; unset ones leave the engine's defaults. */
export function engineSwitches(): EngineExperiments {
  const images = flag("ENGINE_COMPRESS_IMAGES");
  if (images !== undefined && !["engine", "mupdf", "mupdf-inplace"].includes(images)) {
    throw new Error(`ENGINE_COMPRESS_IMAGES must be one of engine, mupdf, mupdf-inplace, got "${images}"`);
  }
  const openvino = flag("OCR_OPENVINO");
  return {
    /** ENGINE_JPEG=rust: the pure-Rust JPEG encoder instead of the system libjpeg-turbo. */
    jpegEncoder: flag("ENGINE_JPEG") === "rust" ? "rust" : "auto",
    /** ENGINE_COMPRESS_SUBSET=off: compress without font subsetting. */
    compressSubsetFonts: flag("ENGINE_COMPRESS_SUBSET") !== "off",
    /** ENGINE_COMPRESS_GUARD=always: the content guard after every lossy compress run. */
    compressGuardAlways: flag("ENGINE_COMPRESS_GUARD") === "always",
    /** ENGINE_COMPRESS_IMAGES=mupdf|mupdf-inplace: MuPDF's rewriter re-encodes every image. */
    compressImages: (images ?? "engine") as "engine" | "mupdf" | "mupdf-inplace",
    /** OCR_NO_FUSE=1: load the OCR models without the graph rewrites. */
    ocrFuse: !flag("OCR_NO_FUSE"),
    /** OCR_REC_SQUEEZE: horizontal scale of recognition crops (engine default 0.8). */
    ocrRecSqueeze: number("OCR_REC_SQUEEZE"),
    /** OCR_REC_PARALLEL=0: recognition batches one after another by one multi-threaded session. */
    ocrRecParallel: flag("OCR_REC_PARALLEL") !== "0",
    /** OCR_OPENVINO: unset, the recogniser runs on OpenVINO where the CPU has bfloat16; 1 on any CPU; 0 never. */
    ocrOpenvino: openvino === "1" ? true : openvino === "0" ? false : undefined,
    /** OCR_REC_MIN_WIDTH: narrowest recognition batch in pixels (engine default 160). */
    ocrRecMinWidth: number("OCR_REC_MIN_WIDTH"),
    /** OCR_TIMING=1: per-stage OCR times on stderr. */
    ocrTiming: !!flag("OCR_TIMING"),
    /** OCR_DEBUG=1: every recognised line and dropped detection box on stderr. */
    ocrDebug: !!flag("OCR_DEBUG"),
  };
}

useEngineExperiments(engineSwitches());
