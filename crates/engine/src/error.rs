//! Engine errors: a stable machine-readable code plus a human message.
//!
//! The codes are part of the contract with the TypeScript server, which maps them to a
//! job's `error.code`; rename one only together with the server's error catalogue.

use std::fmt;

/// Stable error codes. `as_str()` is the wire form (snake_case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// `invalid_pdf`: the input is not a PDF, or MuPDF cannot open or repair it (for
    /// example a header with no objects, a broken page tree, zero pages).
    InvalidPdf,
    /// `encrypted_input`: the PDF needs a password to open. Every operation except
    /// `unlock` refuses such input; the message tells the user to run `unlock` first.
    /// PDFs that are encrypted but open without a password (owner-password only) are
    /// not refused.
    EncryptedInput,
    /// `invalid_password`: `unlock` was given no password, or a wrong one, for a PDF
    /// that needs one.
    InvalidPassword,
    /// `invalid_options`: options are out of range or inconsistent (page index out of
    /// range, not a permutation, deleting every page, bad split ranges, no password for
    /// `protect`, a password longer than 127 bytes, fewer than 2 or more than 50 merge
    /// inputs, ...), or an options object does not deserialize into the options struct
    /// (an unknown field, a value of the wrong type).
    InvalidOptions,
    /// `cancelled`: the job's `JobControl` was cancelled; checked before the work starts
    /// and at every page checkpoint. No output is left behind.
    Cancelled,
    /// `page_limit`: the input has more pages than the `max_pages` cap passed in options.
    PageLimit,
    /// `io_error`: reading the input or writing the output failed (missing file,
    /// permission, disk full, non-UTF-8 path).
    IoError,
    /// `page_too_large`: a page would render to more pixels than the engine's cap
    /// (see `render::MAX_PAGE_PIXELS`); a lower `dpi` may fit.
    PageTooLarge,
    /// `ocr_unavailable`: OCR was not initialised in this process, or ONNX Runtime or a
    /// model could not be loaded (missing file, SHA-256 mismatch with models/manifest.json).
    OcrUnavailable,
    /// `invalid_image`: a JPEG, PNG or WebP input that cannot be decoded.
    InvalidImage,
    /// `ocr_timeout`: Tesseract did not finish a page within the page timeout. OCR marks that
    /// page failed in its JSON and goes on with the others; it reaches a job's error only
    /// from a caller that treats it as fatal.
    OcrTimeout,
    /// `pdfa_unsupported`: a searchable PDF asked for as PDF/A-2b of a document with
    /// something PDF/A-2b forbids that the engine does not convert (a font that is not
    /// embedded, JavaScript, an embedded file, ...; `crate::ocr::pdfa`); the message lists it.
    PdfaUnsupported,
    /// `engine_error`: anything else MuPDF reported while processing; the message
    /// carries MuPDF's text.
    EngineError,
}

/// Serialized as its wire form, [`ErrorCode::as_str`].
impl serde::Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl ErrorCode {
    /// The wire form, e.g. `"encrypted_input"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidPdf => "invalid_pdf",
            ErrorCode::EncryptedInput => "encrypted_input",
            ErrorCode::InvalidPassword => "invalid_password",
            ErrorCode::InvalidOptions => "invalid_options",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::PageLimit => "page_limit",
            ErrorCode::IoError => "io_error",
            ErrorCode::PageTooLarge => "page_too_large",
            ErrorCode::OcrUnavailable => "ocr_unavailable",
            ErrorCode::InvalidImage => "invalid_image",
            ErrorCode::OcrTimeout => "ocr_timeout",
            ErrorCode::PdfaUnsupported => "pdfa_unsupported",
            ErrorCode::EngineError => "engine_error",
        }
    }

    /// Every code, for documentation and tests.
    pub const ALL: [ErrorCode; 13] = [
        ErrorCode::InvalidPdf,
        ErrorCode::EncryptedInput,
        ErrorCode::InvalidPassword,
        ErrorCode::InvalidOptions,
        ErrorCode::Cancelled,
        ErrorCode::PageLimit,
        ErrorCode::IoError,
        ErrorCode::PageTooLarge,
        ErrorCode::OcrUnavailable,
        ErrorCode::InvalidImage,
        ErrorCode::OcrTimeout,
        ErrorCode::PdfaUnsupported,
        ErrorCode::EngineError,
    ];
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An engine failure: `code` for programs, `message` for people.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct EngineError {
    /// Stable code, see [`ErrorCode`].
    pub code: ErrorCode,
    /// Human-readable detail; may quote MuPDF.
    pub message: String,
}

impl EngineError {
    /// Builds an error with the given code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into() }
    }

    pub(crate) fn invalid_options(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidOptions, message)
    }

    pub(crate) fn cancelled() -> Self {
        Self::new(ErrorCode::Cancelled, "the job was cancelled")
    }

    pub(crate) fn encrypted_input() -> Self {
        Self::new(ErrorCode::EncryptedInput, "the PDF is password-protected: run `unlock` with its password first")
    }

    pub(crate) fn io(context: &str, err: std::io::Error) -> Self {
        Self::new(ErrorCode::IoError, format!("{context}: {err}"))
    }

    /// Wraps a MuPDF failure that happened after the document was opened.
    pub(crate) fn engine(context: &str, err: mupdf::Error) -> Self {
        Self::new(ErrorCode::EngineError, format!("{context}: {}", mupdf_message(&err)))
    }
}

/// MuPDF's own text without the Rust wrapper's "MuPDF error, code: N" prefix.
pub(crate) fn mupdf_message(err: &mupdf::Error) -> String {
    match err {
        mupdf::Error::MuPdf(e) => e.message.clone(),
        other => other.to_string(),
    }
}

/// Result alias used across the engine.
pub type Result<T, E = EngineError> = std::result::Result<T, E>;

/// Adds an operation context to MuPDF results: `doc.save(..).ctx("saving")?`.
pub(crate) trait MuPdfResultExt<T> {
    fn ctx(self, context: &str) -> Result<T>;
}

impl<T> MuPdfResultExt<T> for std::result::Result<T, mupdf::Error> {
    fn ctx(self, context: &str) -> Result<T> {
        self.map_err(|e| EngineError::engine(context, e))
    }
}
