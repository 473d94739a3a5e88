// The only importer of native/: loads the napi-rs addon, typed by the declarations napi
// generates from the Rust signatures (native/index.d.ts, written by `bun run build:native`).
import { createRequire } from "node:module";
import { join } from "node:path";
import { config } from "../config";
import type * as Addon from "../../native/index";

/** The addon's exports, as native/index.d.ts declares them; no option struct is restated here. */
export type NativeEngine = typeof Addon;
export type JobControl = Addon.JobControl;
/** What `identify` found (kind, page count, encryption). */
export type Identified = Addon.Identification;
export type DocumentKind = Identified["kind"];

let loaded: NativeEngine | null = null;

export function engine(): NativeEngine {
  if (!loaded) {
    const require = createRequire(import.meta.url);
    const native = require(join(import.meta.dir, "../../native/index.js")) as NativeEngine;
    // The engine reads no environment: its settings come from config.ts, once per process.
    const { threads, ...rest } = config.engine;
    native.configure({ ...rest, threads: threads || undefined });
    loaded = native;
  }
  return loaded;
}
