//! Searchable PDFs as PDF/A-2b (ISO 19005-2, level B: the pages' appearance is preserved):
//! the `pdfa: "2b"` option of `ocr` (output `searchable_pdf`) and `searchable_pdf`, an extension
//! (docs/ocr.md, "PDF/A-2b").
//!
//! [`problems`] is run on the input before any page is read: what PDF/A-2b forbids and this
//! module does not convert refuses the job at once (`pdfa_unsupported`, the message naming
//! each kind of problem and where it was first seen). [`convert`] runs just before the save
//! and makes what can be made without changing how a page looks:
//!
//! - `/OutputIntents`: one `GTS_PDFA1` intent whose profile is MuPDF's built-in sRGB ICC
//!   profile (the one its DeviceRGB uses), so DeviceRGB and DeviceGray are allowed;
//! - `/Metadata`: an XMP packet (`pdfaid:part` 2, `pdfaid:conformance` B) whose Dublin Core,
//!   XMP and PDF properties equal the Info dictionary's, which is rewritten to the entries that
//!   have such a property (Title, Author, Subject, Keywords, Creator kept; Producer `docproc`;
//!   CreationDate kept when it parses, else now; ModDate now);
//! - a trailer `/ID`, a header version of at most 1.7 (csrc/pdfa.c), no encryption (the save
//!   writes none; encrypted inputs are refused as for every operation);
//! - images' `/Interpolate true` removed (a rendering hint PDF/A forbids) and Link
//!   annotations given the Print flag (they draw nothing).
//!
//! The text layer's own font is a compliant embedded font (glyphless_font.rs; every CID maps
//! to its one glyph, not to `.notdef`). What is checked and refused is listed in [`problems`];
//! what is neither converted nor checked (implementation limits, embedded font programs'
//! own consistency, form XObjects' content) is listed in docs/ocr.md.
//!
//! The parts: [`problems`] (what is checked and refused), `output_intent` (the sRGB output
//! intent), `metadata` (the Info dictionary and the XMP packet) with `date` (their dates),
//! `page_fixes` (image interpolation, link flags), and `objects` (reading PDF objects).

mod date;
mod metadata;
mod objects;
mod output_intent;
mod page_fixes;
mod problems;

use std::ffi::{c_char, c_int, c_void, CStr};
use std::time::SystemTime;

use mupdf::pdf::PdfDocument;
use mupdf::Buffer;
use serde::Deserialize;

use crate::error::{EngineError, ErrorCode, MuPdfResultExt, Result};
use crate::pdf::graft::{context, raw};

pub use date::Date;
pub use problems::problems;

use metadata::Info;
use output_intent::output_intent;
use page_fixes::fix_pages;

extern "C" {
    fn engine_pdfa_header_and_id(ctx: *mut c_void, trailer: *mut c_void, err: *mut c_char, errlen: c_int) -> c_int;
}

/// What `Producer` and `xmp:CreatorTool`-free metadata name as the writer.
pub const PRODUCER: &str = "docproc";

/// The conformance levels offered; only 2b.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum PdfaLevel {
    /// PDF/A-2b.
    #[serde(rename = "2b")]
    A2b,
}

/// Makes `doc` PDF/A-2b, as the module's documentation says; call after [`problems`] found
/// none and every change to the pages is made, just before the save.
pub fn convert(doc: &mut PdfDocument, level: PdfaLevel, now: SystemTime) -> Result<()> {
    let PdfaLevel::A2b = level;
    let mut trailer = doc.trailer().ctx("reading the trailer")?;
    let mut err = [0 as c_char; 512];
    if unsafe { engine_pdfa_header_and_id(context(), raw(&trailer), err.as_mut_ptr(), err.len() as c_int) } != 0 {
        let msg = unsafe { CStr::from_ptr(err.as_ptr()) }.to_string_lossy().into_owned();
        return Err(EngineError::new(ErrorCode::EngineError, format!("setting the header and /ID: {msg}")));
    }
    fix_pages(doc)?;
    let mut catalog = doc.catalog().ctx("reading the catalog")?;
    let intent = output_intent(doc)?;
    let mut intents = doc.new_array().ctx("output intents")?;
    intents.array_push(intent).ctx("output intents")?;
    catalog.dict_put("OutputIntents", intents).ctx("output intents")?;

    let info = Info::read(&trailer, now);
    let info_dict = info.write(doc)?;
    trailer.dict_put("Info", info_dict).ctx("writing the Info dictionary")?;
    let xmp = info.xmp();
    let dict = doc
        .new_object_from_str(&format!("<< /Type /Metadata /Subtype /XML /Length {} >>", xmp.len()))
        .ctx("metadata")?;
    let metadata = doc
        .add_stream(&Buffer::from_bytes(xmp.as_bytes()).ctx("buffer")?, Some(&dict), false)
        .ctx("adding the metadata")?;
    catalog.dict_put("Metadata", metadata).ctx("adding the metadata")?;
    Ok(())
}
