//! Opening PDFs: header check, MuPDF open (with its xref repair), password handling.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use mupdf::pdf::{PdfDocument, PdfObject};
use mupdf::Document;

use crate::error::{mupdf_message, EngineError, ErrorCode, Result};
use crate::pdf::tree::{install_page_tree, page_refs, pages_by_scan};

/// An opened document and what we learned about its encryption.
pub(crate) struct OpenOutcome {
    pub doc: PdfDocument,
    /// Has an `/Encrypt` dictionary.
    pub encrypted: bool,
    /// Needs a password before its content can be read.
    pub password_required: bool,
}

/// How an operation treats a password-protected input.
#[derive(Clone, Copy)]
pub(crate) enum PasswordPolicy<'a> {
    /// Page operations: a PDF that needs a password is `encrypted_input`.
    Refuse,
    /// `unlock`: authenticate with this password; a missing or wrong one is
    /// `invalid_password`.
    Authenticate(Option<&'a str>),
}

/// A PDF ready for editing.
pub(crate) struct OpenedPdf {
    pub doc: PdfDocument,
    pub encrypted: bool,
    /// Page objects in order; never empty.
    pub pages: Vec<PdfObject>,
    /// MuPDF had to rebuild the cross-reference table while opening: the file is
    /// damaged, so its content streams deserve a check too.
    pub repaired: bool,
}

impl OpenedPdf {
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }
}

pub(crate) fn path_str(path: &Path) -> Result<&str> {
    path.to_str()
        .ok_or_else(|| EngineError::new(ErrorCode::IoError, format!("path is not valid UTF-8: {}", path.display())))
}

/// Where a PDF comes from.
#[derive(Clone, Copy)]
pub(crate) enum Source<'a> {
    /// Read lazily by MuPDF.
    Path(&'a Path),
    /// Already in memory (split re-parses an encrypted input once per part).
    Bytes(&'a [u8]),
}

/// Opens a PDF with MuPDF, without authenticating. MuPDF repairs broken xref tables
/// while opening; a file it cannot make sense of is `invalid_pdf`.
pub(crate) fn open_document(source: Source<'_>) -> Result<OpenOutcome> {
    let mut head = Vec::with_capacity(1024);
    match source {
        Source::Path(path) => {
            File::open(path)
                .and_then(|f| f.take(1024).read_to_end(&mut head))
                .map_err(|e| EngineError::io("reading the input", e))?;
        }
        Source::Bytes(bytes) => head.extend_from_slice(&bytes[..bytes.len().min(1024)]),
    }
    if !head.windows(5).any(|w| w == b"%PDF-") {
        return Err(EngineError::new(ErrorCode::InvalidPdf, "not a PDF: no %PDF- header in the first 1024 bytes"));
    }
    let invalid = |e: mupdf::Error| {
        EngineError::new(ErrorCode::InvalidPdf, format!("cannot open the PDF: {}", mupdf_message(&e)))
    };
    let doc = match source {
        Source::Path(path) => {
            PdfDocument::try_from(Document::open(path_str(path)?).map_err(invalid)?).map_err(invalid)?
        }
        Source::Bytes(bytes) => PdfDocument::from_bytes(bytes).map_err(invalid)?,
    };
    let password_required = doc.needs_password().map_err(invalid)?;
    let encrypted = doc.trailer().and_then(|t| t.get_dict("Encrypt")).map_err(invalid)?.is_some();
    Ok(OpenOutcome { doc, encrypted, password_required })
}

/// The document's pages per its page tree or, when that is broken, per a scan for
/// page objects (which then becomes the new page tree).
fn readable_pages(doc: &mut PdfDocument) -> Result<Vec<PdfObject>> {
    let from_tree = match doc.page_count() {
        Ok(n) if n > 0 => page_refs(doc, n as usize).ok(),
        _ => None,
    };
    if let Some(pages) = from_tree {
        return Ok(pages);
    }
    let mut pages = pages_by_scan(doc)?;
    if pages.is_empty() {
        return Err(EngineError::new(ErrorCode::InvalidPdf, "the PDF has no pages"));
    }
    install_page_tree(doc, &mut pages)?;
    Ok(pages)
}

/// Page count for identify: MuPDF's, or the scan's when the page tree is broken.
pub(crate) fn count_pages(doc: &PdfDocument) -> Option<usize> {
    match doc.page_count() {
        Ok(n) if n > 0 => Some(n as usize),
        _ => {
            load_every_object(doc);
            pages_by_scan(doc).ok().map(|p| p.len()).filter(|&n| n > 0)
        }
    }
}

/// Parses every object once, so that MuPDF's xref repair, which it otherwise runs
/// lazily the first time it meets a broken object, happens now. A repair rebuilds the
/// object table from the file and would silently discard edits made before it, e.g.
/// when the final save walks the whole document.
fn load_every_object(doc: &PdfDocument) {
    let mut num = 1;
    // Re-read the length each time: a repair can change it.
    while doc.xref_len().is_ok_and(|len| num < len) {
        let _ = doc.xref_object(num as i32);
        num += 1;
    }
}

/// Opens a PDF for an operation, applying the password policy and checking that it
/// has pages (and no more than `max_pages`).
pub(crate) fn open_pdf(source: Source<'_>, policy: PasswordPolicy<'_>, max_pages: Option<u32>) -> Result<OpenedPdf> {
    let OpenOutcome { mut doc, encrypted, password_required } = open_document(source)?;
    if password_required {
        match policy {
            PasswordPolicy::Refuse => return Err(EngineError::encrypted_input()),
            PasswordPolicy::Authenticate(None) => {
                return Err(EngineError::new(
                    ErrorCode::InvalidPassword,
                    "the PDF is password-protected: a password is required to unlock it",
                ))
            }
            PasswordPolicy::Authenticate(Some(password)) => {
                let ok =
                    password.len() < 128 && !password.contains('\0') && doc.authenticate(password).unwrap_or(false);
                if !ok {
                    return Err(EngineError::new(
                        ErrorCode::InvalidPassword,
                        "the password is not correct for this PDF",
                    ));
                }
            }
        }
    }
    load_every_object(&doc);
    let pages = readable_pages(&mut doc)?;
    let page_count = pages.len();
    if let Some(cap) = max_pages {
        if page_count > cap as usize {
            return Err(EngineError::new(
                ErrorCode::PageLimit,
                format!("the PDF has {page_count} pages, more than the limit of {cap}"),
            ));
        }
    }
    // MuPDF refuses an incremental save exactly when it attempted a repair (or
    // applied its own redactions, which we never use); the flag itself is not exposed.
    let repaired = !doc.can_be_saved_incrementally();
    Ok(OpenedPdf { doc, encrypted, pages, repaired })
}
