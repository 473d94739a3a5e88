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
//! Option objects whose fields have the wrong JS type make the call throw
//! synchronously with N-API's own error (`code` like `"InvalidArg"`); values of the
//! right type but out of range (negative page, 45 degrees, unknown split mode) reject
//! with `invalid_options`.
//!
//! # Progress and cancellation
//!
//! `JobControl` wraps shared atomics: `cancel()` sets a flag the engine checks before
//! starting and at every page; `progress()` reads the page counters. No callbacks run
//! from engine threads into JS.
//!
//! # Layout
//!
//! `runtime` holds the thread pool, the Promise/error plumbing and `JobControl`; `settings`
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
