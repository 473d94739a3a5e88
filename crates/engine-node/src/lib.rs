//! Node/Bun addon over the `engine` crate: one exported async function per capability.
//!
//! # Threads
//!
//! Every function returns a Promise at once and runs the work on the addon's own pool
//! of engine threads (size: `configure({ threads })`, default the number of cores), never on
//! the JS thread and not on the runtime's libuv pool. MuPDF keeps one context per
//! thread; a document never leaves the thread that opened it. Panics are caught and
//! reported as `engine_error`.
//!
//! # Errors
//!
//! A failed operation rejects its Promise with a JS `Error` whose `code` property is the
//! engine error code (`invalid_pdf`, `encrypted_input`, `invalid_password`,
//! `invalid_options`, `cancelled`, `page_limit`, `io_error`, `engine_error`; see
//! `engine::ErrorCode`) and whose `message` is the human-readable detail. The code is
//! set natively (it is the `code` argument of `napi_create_error`), so no message
//! parsing is needed: `err.code === "encrypted_input"`.
//!
//! # Options and results
//!
//! No option or result struct is restated here: each export takes the engine's own options
//! struct as a plain JS object under the API's names (snake_case, as POST /jobs takes them),
//! read by serde (`runtime::options_from`), and resolves to the engine's result struct,
//! serialized under its field names (snake_case too). An options object the struct does not
//! take (an unknown field, a value of the wrong type or out of its type's range) rejects with
//! `invalid_options` naming the field, as do values the engine refuses (a negative page, 45
//! degrees). The TypeScript types of the options and results are in src/engine/contract.ts:
//! each export names them (`ts_args_type`, `ts_return_type`) and the generated
//! native/index.d.ts imports them (its header, crates/engine-node/index-header.d.ts).
//!
//! # Progress and cancellation
//!
//! `JobControl` wraps shared atomics: `cancel()` sets a flag the engine checks before
//! starting and at every page; `progress()` reads the page counters. No callbacks run
//! from engine threads into JS.
//!
//! # Layout
//!
//! `runtime` holds the thread pool, the Promise/error plumbing, the serde crossing of options
//! and results, and `JobControl`; `settings`
//! the process-wide settings the service hands over once (`configure`: the engine and the
//! addon read no environment); each other module exports one capability of the engine: `pdf` (identify and page operations),
//! `pagework` (render, redact, compress), `ocr`, `convert` (sheets, pdf -> docx).

#![deny(clippy::all)]

mod convert;
mod ocr;
mod pagework;
mod pdf;
mod runtime;
mod settings;
