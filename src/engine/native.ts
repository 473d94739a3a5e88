// The only importer of native/: loads the napi-rs addon, typed by the declarations napi
// generates from the Rust signatures (native/index.d.ts, written by `bun run build:native`),
// whose options and results are the engine's structs as ./contract.ts types them.
import { createRequire } from "node:module";
import { join } from "node:path";
import { config } from "../config";
import type * as Addon from "../../native/index";
import type { Identification } from "./contract";

/** The addon's exports, as native/index.d.ts declares them. */
export type NativeEngine = typeof Addon;
export type JobControl = Addon.JobControl;
/** What `identify` found (kind, page count, encryption). */
export type Identified = Identification;
export type { DocumentKind } from "./contract";

/** The engine's settings beyond its thread pool: comparisons and diagnostics, never set by the service. */
export type EngineExperiments = Omit<Addon.EngineSettings, "threads">;

let loaded: NativeEngine | null = null;
let experiments: EngineExperiments = {};

/**
 * For benches and diagnostics only (scripts/bench/engine-switches.ts): engine settings the
 * operator's configuration does not have, applied when the addon loads. Throws once it has.
 */
export function useEngineExperiments(settings: EngineExperiments): void {
  if (loaded) throw new Error("useEngineExperiments: the engine is already loaded");
  experiments = settings;
}

export function engine(): NativeEngine {
  if (!loaded) {
    const require = createRequire(import.meta.url);
    const native = require(join(import.meta.dir, "../../native/index.js")) as NativeEngine;
    // The engine reads no environment: its thread pool comes from config.ts, once per process.
    native.configure({ ...experiments, threads: config.engineThreads || undefined });
    loaded = native;
  }
  return loaded;
}
