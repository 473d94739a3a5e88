//! OCR on pixel buffers with PaddleOCR models (PP-OCRv6 tiny detection and recognition,
//! the PP-OCR 0/180 direction classifier) through ONNX Runtime.
//!
//! No MuPDF here: callers hand in grey or RGB pixels ([`Image`]) and get back lines and
//! words with boxes in the input's pixel coordinates ([`PageText`]).
//!
//! # Runtime
//!
//! ONNX Runtime is loaded at run time (`ort` with `load-dynamic`): the build with OpenVINO's
//! execution provider that the manifest names ([`ModelFiles::openvino_runtime`], PyPI
//! `onnxruntime-openvino`, x86-64) when it is installed and [`OcrTuning::openvino`] is on,
//! else the path given to [`Ocr::new`] (the service passes the `libonnxruntime.so.1` shipped
//! in the npm package `onnxruntime-node`). Nothing is downloaded, at build or at run time. One [`Ocr`] holds
//! the three sessions (detection, direction classifier, recognition), created once and
//! reused; each session is behind a mutex, so concurrent pages in one process take turns
//! per model run. Model files are checked against their SHA-256 before loading
//! ([`ModelFiles`]).
//!
//! # Threads
//!
//! [`OcrConfig::intra_threads`] is ONNX Runtime's intra-op pool size per session (inter-op
//! is 1: the models are sequential). With [`OcrConfig::machine_lock`], every model run
//! holds an exclusive `flock` on that file, shared by every process on the machine: the
//! service gives each worker's sessions all the cores and lets one model run at a time
//! use them, so processes x intra-op threads never exceed the cores, a lone job gets every
//! core, and the image work between runs (crops, decoding, layout) overlaps another
//! process's run (see docs/ocr.md). With more than one thread, the recogniser is loaded as
//! one single-threaded session per thread and a page's recognition batches are read side by
//! side, under one hold of the lock ([`OcrTuning::rec_parallel`]): the same batches and
//! reads, without the hand-overs between threads inside every layer of a shared run.
//!
//! # Pipeline ([`Ocr::recognise`])
//!
//! 1. grey conversion; inputs above [`MAX_INPUT_SIDE`] pixels are shrunk by an integer factor;
//! 2. detection on a copy whose longest side is at most [`OcrConfig::det_max_side`]
//!    (multiple of 32), DB post-processing in [`det`];
//! 3. page orientation: if most elongated boxes are taller than wide, the page is turned by
//!    90 degrees; then the direction classifier votes 0/180 over the widest lines (weighted
//!    by confidence) and the page is turned by 180 degrees if the votes say so;
//! 4. each line is cropped from the upright full-resolution page along its rotated
//!    rectangle, straight to a height of 48 pixels (bilinear), and recognised in batches of
//!    similar widths; CTC decoding keeps frame positions, which give the word boxes and
//!    recover dropped spaces ([`rec`]); a letter in doubt between its cases takes the case of
//!    the letter before it ([`case`]), and a recovered space is taken back where the page
//!    reads the joined word elsewhere ([`rec::rejoin_split_words`]);
//! 5. on a page whose opening quotes read typographic (‘ “), the apostrophes and closing quotes
//!    read straight take the typographic form ([`quotes`]);
//! 6. lines the detector ran across a column gutter are cut there, and lines are ordered by a
//!    recursive XY-cut with column detection on their deskewed boxes ([`gutter`], [`layout`]).
//!
//! # Languages
//!
//! The manifest lists one or more recognisers, each with the Tesseract-style language codes
//! its dictionary covers ([`languages`]). The first is the default and is loaded by
//! [`Ocr::new`]; the others are loaded the first time a request needs them
//! ([`Ocr::recognise_with`]), once per process, and kept. [`lexicon`] corrects the words
//! of a page read for named languages against their Hunspell dictionaries (the engine
//! applies it).

#![deny(missing_docs)]

mod assemble;
mod batches;
pub mod case;
mod config;
pub mod det;
mod engine;
pub mod fuse;
pub mod gutter;
pub mod image;
pub mod inverted_marks;
pub mod languages;
pub mod layout;
pub mod lexicon;
mod models;
mod page_text;
mod pipeline;
pub mod quotes;
pub mod rec;
mod recognise;
mod recogniser;
mod sessions;
pub mod tesseract;
mod timing;

pub use crate::config::{OcrConfig, OcrTuning};
pub use crate::det::RotRect;
pub use crate::engine::{cpu_has_bf16, Ocr, Reader};
pub use crate::image::{Grey, Image};
pub use crate::languages::{LanguageError, LanguageSets};
pub use crate::models::{ModelFile, ModelFiles, RecogniserFiles};
pub use crate::page_text::{Alternative, Block, Line, PageText, Rotation, Word};
pub use crate::recogniser::REC_SESSIONS_MAX;
pub use crate::timing::{process_cpu_ms, StageTimer};

/// Errors of the OCR crate.
#[derive(Debug, thiserror::Error)]
pub enum OcrError {
    /// The runtime library or a model could not be loaded (missing file, wrong hash, bad model).
    #[error("OCR initialisation failed: {0}")]
    Init(String),
    /// The input buffer is not a valid image.
    #[error("invalid image: {0}")]
    Input(String),
    /// ONNX Runtime failed while running a model.
    #[error("inference failed: {0}")]
    Inference(String),
    /// A recogniser did not finish a page within its time.
    #[error("{0}")]
    Timeout(String),
    /// The caller's cancel check stopped the page.
    #[error("cancelled")]
    Cancelled,
}

/// Result alias.
pub type Result<T> = std::result::Result<T, OcrError>;

/// Inputs larger than this (longest side, pixels) are shrunk by an integer factor first.
pub const MAX_INPUT_SIDE: usize = 4200;
/// Default longest side of the detection input (pixels). PP-OCRv6 tiny keeps its accuracy
/// down to here on the corpus pages; at 960 the brochure's two columns merged into bands
/// (CER 14.6% vs 1.8%), at 1280 the magazine's columns did, with [`det::UNCLIP_RATIO`] 1.0.
pub const DET_MAX_SIDE: usize = 1120;
/// Height of recognition crops (the PP-OCR recognisers' input height).
pub const REC_HEIGHT: usize = 48;
/// Widest recognition crop in pixels (longer lines are squeezed).
pub const REC_MAX_WIDTH: usize = 48 * 60;
/// Horizontal scale of recognition crops relative to keeping the aspect ratio. Recognition
/// time is proportional to crop width; squeezing is within what the model saw in training
/// (PaddleOCR squeezes lines wider than its batch width). 0.8 takes 12-15% less CPU than 1.0;
/// lines it reads doubtfully are read again unsqueezed (`recognise::REREAD_BELOW`), which
/// keeps the evaluation set's CER (docs/ocr.md, step 4). `OCR_REC_SQUEEZE` sets it.
pub const REC_SQUEEZE: f32 = 0.8;
/// Narrowest recognition batch: shorter crops are padded to it (PaddleOCR pads to 320;
/// 160 measured the same CER on the corpus with less padding).
pub const REC_MIN_WIDTH: usize = 160;
/// Lines whose mean character confidence is below this are dropped (PaddleOCR's drop_score).
pub const DROP_SCORE: f32 = 0.5;
/// A page whose widest lines ([`PROBE_LINES`] of them, read first) were read with a mean
/// character confidence under this is put to the 0/180 direction classifier (and read turned
/// if it votes so and the turned page reads them more surely).
pub const DIRECTION_CHECK_BELOW: f32 = 0.9;
/// How many lines (those of the widest crops, `recognise::probe_lines`) are read first to
/// judge whether a page is upside down.
pub const PROBE_LINES: usize = 12;

/// An ONNX Runtime failure as an [`OcrError::Inference`].
fn inference<E: std::fmt::Display>(e: E) -> OcrError {
    OcrError::Inference(e.to_string())
}
