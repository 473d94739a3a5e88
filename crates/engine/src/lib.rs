//! Document engine of the document-processing service, on MuPDF: type sniffing, PDF page
//! operations, page rendering/redaction/compression, OCR and conversions. Pure Rust over
//! MuPDF and a few C shims (`csrc/`); no N-API: the Node/Bun addon in `engine-node` is a
//! thin layer over this crate, and the engine reads no environment variables (every
//! setting is an option, filled by the addon from the service's configuration or by the
//! examples and benches).
//!
//! # Scope, by capability
//!
//! | module | what |
//! |---|---|
//! | [`identify()`] | kind (pdf, docx, xlsx, csv, jpeg, png, webp, unknown), page count and encryption, from the bytes alone; rules in [`identify`](mod@identify) |
//! | [`pdf`] | page operations that edit the object graph only: [`rotate`], [`reorder`], [`delete_pages`], [`merge`], [`split`], [`protect`], [`unlock`] |
//! | [`pagework`] | operations that rasterise or re-encode content: [`pagework::render`] (pdf -> jpg), [`pagework::redact`], [`pagework::compress`] |
//! | [`ocr`](mod@ocr) | OCR of PDFs and images (blocks JSON, searchable PDF) over the `ocr` crate |
//! | [`convert`] | pdf -> docx ([`convert::docx`]) and xlsx <-> csv ([`convert::sheets`]) |
//! | [`control`], [`error`] | shared by all: progress/cancellation and the error codes |
//!
//! Layers point down: `convert` uses `ocr`, which uses `pagework::render` (raster caps) and
//! `pdf` (opening, content checks, saving); `pagework` uses `pdf`; `pdf` uses only `control`
//! and `error`.
//!
//! Option structs derive serde `Deserialize` under the API's option names (snake_case, as POST
//! /jobs takes them; an unknown field is refused) and result structs `Serialize`: that is how
//! they cross to the service, which the addon hands them to and from as they are.
//!
//! Every operation takes file paths, writes its output to `<output>.tmp` and renames it
//! into place, so a failed or cancelled job leaves nothing at `output`. [`JobControl`]
//! carries progress counters and a cancellation flag shared with the caller; operations
//! check it before starting and at every page.
//!
//! ```no_run
//! use std::path::Path;
//! use engine::{rotate, JobControl, RotateOptions};
//!
//! let control = JobControl::new();
//! let options = RotateOptions { degrees: 90, pages: None, max_pages: None };
//! let result = rotate(Path::new("in.pdf"), Path::new("out.pdf"), &options, &control)?;
//! assert_eq!(result.page_count, result.pages_processed);
//! # Ok::<(), engine::EngineError>(())
//! ```
//!
//! # Errors
//!
//! Every failure is an [`EngineError`] with a stable [`ErrorCode`] (see its variants).
//!
//! # Limitations
//!
//! - Page operations edit the object graph; images, fonts and other streams are never
//!   decoded, which keeps hostile files (huge images, enormous pages) cheap. Page
//!   content streams are decoded once, in Rust, with a 256 MiB cap, only to check them:
//!   a stream that fails part-way is cut to what decodes (what viewers show), one that
//!   exceeds the cap or uses an image codec is `invalid_pdf` (decompression bombs); see
//!   `src/pdf/content.rs`. Render, redact, compress, OCR and pdf -> docx run the same check
//!   before MuPDF interprets a page.
//! - Broken files: MuPDF repairs the xref table; a broken page tree is rebuilt from
//!   the `/Type /Page` objects found in the file (so a truncated file may yield fewer
//!   pages than its metadata claims).
//! - Split re-parses the input for every part (MuPDF cannot copy a document), so its
//!   time grows with parts x document size: about 2 s for a 352-page, 2.6 MB book split
//!   into single pages on one core.
//! - Saving garbage-collects unreachable objects and compresses unfiltered streams, but
//!   does not de-duplicate objects (quadratic in MuPDF) and writes a classic xref
//!   table without object streams, so an output can be larger than its input (compress
//!   is the operation that makes files smaller).
//! - A page raster is capped at 100 megapixels ([`pagework::render::MAX_PAGE_PIXELS`]):
//!   render and redact refuse larger pages with `page_too_large`, OCR lowers its dpi.
//! - OCR needs [`ocr::pipeline::ocr_init`] once per process (ONNX Runtime and the model
//!   files, hash-checked); it reads horizontal text (pages turned by 90/180/270 degrees are
//!   detected), not vertical text.
//! - pdf -> docx keeps text, styles, pictures and simple tables, not absolute positions,
//!   text boxes or vector drawings; the full list is in [`convert::docx`].
//! - Not thread-safe across calls on the same document; each call owns its documents
//!   and runs on its thread (render and compress add worker threads of their own).
//!   Concurrent calls on different threads are fine.
//! - MuPDF cannot be interrupted mid-call: cancellation takes effect at the next page
//!   checkpoint, not inside the final save.
//! - What merge keeps from the second and later inputs is listed in [`merge`](mod@pdf::merge);
//!   what delete/split prune is listed in [`delete_pages`] and [`split`](mod@pdf::split).
//! - MuPDF warnings about damaged files go to stderr.

#![deny(missing_docs)]
// `!(x > 0.0)` is written on purpose where NaN must take the same branch as 0 (degenerate boxes,
// unknown resolutions); `partial_cmp` would hide that.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub mod control;
pub mod convert;
pub mod error;
pub mod identify;
pub mod ocr;
pub mod pagework;
pub mod pdf;

pub use control::{JobControl, Progress};
pub use error::{EngineError, ErrorCode, Result};
pub use identify::{identify, Identification, Kind};
pub use pdf::merge::{merge, MERGE_MAX_INPUTS, MERGE_MIN_INPUTS};
pub use pdf::pages::{delete_pages, reorder, rotate, DeletePagesOptions, ReorderOptions, RotateOptions};
pub use pdf::security::{protect, unlock, ProtectOptions, UnlockOptions, MAX_PASSWORD_BYTES};
pub use pdf::split::{split, SplitMode, SplitOptions, SplitResult, SPLIT_MAX_PARTS};
pub use pdf::PageOpResult;
