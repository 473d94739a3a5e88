//! One page's reading: pages that already carry text, the reader of a request's languages,
//! the read and its word corrections.

use std::time::Duration;

use mupdf::pdf::{PdfDocument, PdfObject};

use crate::control::JobControl;
use crate::error::{EngineError, MuPdfResultExt, Result};
use crate::ocr::json::{blocks_json, PageJson};

use super::init::{engine, ocr_failed};
use super::render::render_for_ocr;

/// Non-blank characters from which a page counts as already carrying text.
pub const TEXT_PAGE_MIN_CHARS: usize = 16;

/// Whether a page's text (as MuPDF extracts it) makes it a page that already carries text:
/// at least [`TEXT_PAGE_MIN_CHARS`] non-blank characters. The rule of
/// [`ocr_document`](super::ocr_document), shared with pdf -> docx.
pub fn has_text_layer(text: &str) -> bool {
    text.chars().filter(|c| !c.is_whitespace()).count() >= TEXT_PAGE_MIN_CHARS
}

/// A text layer as MuPDF extracts it, in the JSON's form: lines without trailing blanks,
/// runs of blank lines (MuPDF's block breaks) as one empty line, no blank start or end.
pub(super) fn layer_text(text: &str) -> String {
    let mut out = String::new();
    let mut blank = false;
    for line in text.lines().map(str::trim_end) {
        if line.trim().is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank { "\n\n" } else { "\n" });
        }
        out.push_str(line);
        blank = false;
    }
    out
}

/// Renders a loaded page and recognises it with the default recogniser. Returns the dpi, the
/// pixel -> displayed point scales (x, y) and the engine's result.
fn recognise_loaded(
    engine: &ocr::Ocr,
    page: &mupdf::Page,
    page_obj: &PdfObject,
    bounds: mupdf::Rect,
) -> Result<(f32, f32, f32, ocr::PageText)> {
    let (dpi, sx, sy, image) = render_for_ocr(engine.timing(), page, page_obj, bounds)?;
    let result = engine.recognise_with(&image, 0).map_err(ocr_failed)?;
    Ok((dpi, sx, sy, result))
}

/// The OCR of one page of an open PDF: blocks (lines, words, boxes in displayed points from
/// the top-left of the page) in reading order. Works on any page (it does not check for a
/// text layer; see [`has_text_layer`]). Needs [`ocr_init`](super::ocr_init).
pub fn ocr_page(doc: &PdfDocument, index: usize) -> Result<PageJson> {
    let engine = engine()?;
    let page = doc.load_page(index as i32).ctx("loading the page")?;
    let bounds = page.bounds().ctx("measuring the page")?;
    let (pw, ph) = (bounds.x1 - bounds.x0, bounds.y1 - bounds.y0);
    let page_obj = doc.find_page(index as i32).ctx("finding the page")?;
    let (dpi, sx, sy, mut result) = recognise_loaded(engine, &page, &page_obj, bounds)?;
    correct_words(&mut result, None);
    let blocks = blocks_json(&result, sx, sy, pw, ph);
    Ok(PageJson::recognised(index, pw, ph, dpi, &result, blocks))
}

/// The word corrections of a recognised page: against the named languages' dictionaries
/// (and Spanish opening marks), or, without languages, against English when the page is
/// English; the same for every output (JSON, searchable PDF, pdf -> docx).
pub(super) fn correct_words(result: &mut ocr::PageText, languages: Option<&[String]>) {
    match languages {
        Some(languages) => {
            ocr::lexicon::correct_page(result, languages);
            ocr::inverted_marks::open_sentences(result, languages);
        }
        None => {
            ocr::lexicon::correct_unnamed_page(result);
        }
    }
}

/// What reads a request's languages (an ONNX recogniser or Tesseract), or `invalid_options`
/// naming the supported codes and how to install a missing one (the API checks them first;
/// this guards every other caller).
pub fn reader_for(engine: &ocr::Ocr, languages: Option<&[String]>) -> Result<ocr::Reader> {
    engine.reader_for(languages).map_err(|e| {
        EngineError::invalid_options(format!("{e}; supported: {}", engine.supported_languages().join(", ")))
    })
}

/// The name the JSON gives the engine of a reader (`pp-ocrv6-tiny`, `tesseract-5.3.0`).
pub(super) fn engine_label(engine: &ocr::Ocr, reader: &ocr::Reader) -> String {
    match reader {
        ocr::Reader::Model(i) => engine.engine_name(*i).to_string(),
        ocr::Reader::Tesseract(_) => format!("tesseract-{}", ocr::tesseract::Tesseract::version()),
    }
}

/// Reads a rendered page with `reader`: the text and what script detection said.
pub(super) fn read_image(
    engine: &ocr::Ocr,
    reader: &ocr::Reader,
    image: &ocr::Image,
    dpi: f32,
    timeout: Duration,
    control: &JobControl,
    osd: Option<&ocr::tesseract::Osd>,
) -> std::result::Result<(ocr::PageText, Option<ocr::tesseract::Osd>), ocr::OcrError> {
    match reader {
        ocr::Reader::Model(i) => Ok((engine.recognise_with(image, *i)?, osd.cloned())),
        ocr::Reader::Tesseract(languages) => {
            let read = engine.recognise_tesseract(
                image,
                &ocr::tesseract::TessPage {
                    languages,
                    dpi,
                    timeout,
                    cancel: &|| control.is_cancelled(),
                    layout: None,
                    osd: osd.cloned(),
                },
            )?;
            Ok((read.page, read.osd))
        }
    }
}
