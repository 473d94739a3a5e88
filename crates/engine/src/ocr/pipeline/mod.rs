//! OCR of PDFs and images: MuPDF renders each page, `crates/ocr` reads it, and the
//! result is returned as `blocks` JSON and/or written as a searchable PDF (the original
//! pages with an invisible text layer; see [`searchable`](mod@crate::ocr::searchable)).
//!
//! # Rendering
//!
//! Each selected page is rendered in grey at the resolution of its largest image
//! ("native": image pixels / page size, so a scan is read at its own pixels), at most
//! [`MAX_OCR_DPI`]; a small scan whose raster would be under [`MIN_OCR_SIDE`] pixels is
//! enlarged towards [`MIN_OCR_DPI`]; pages without images at [`DEFAULT_OCR_DPI`]. The raster is capped at
//! [`MAX_OCR_SIDE`] pixels a side (the dpi is lowered to fit), so a 35000-pixel scan
//! or an enormous page cannot exhaust memory.
//!
//! # Pages that already carry text
//!
//! A page whose text layer has at least [`TEXT_PAGE_MIN_CHARS`] non-blank characters
//! (born-digital, or already OCRed) is not OCRed: in `blocks` it appears with
//! `"ocr": false, "skipped": "has_text"`, the text read from its text layer and no blocks,
//! in a searchable PDF it is kept as it is. It is returned, so it counts in
//! `pages_processed` (credits) like a recognised page: the spec prices ocr and
//! searchable_pdf per page, whatever the page held.
//!
//! # Images
//!
//! JPEG, PNG and WebP inputs are one-page documents: MuPDF converts them to a PDF page
//! (its size from the image's resolution, 72 dpi when it has none), which is then
//! processed like a scanned PDF page. MuPDF has no WebP decoder, so WebP is decoded here
//! (`image-webp`, pure Rust), flattened on white where it has alpha, and handed to MuPDF
//! as RGB pixels; images above [`MAX_IMAGE_PIXELS`] are refused (`invalid_image`).
//!
//! # Damaged and hostile PDFs
//!
//! Before any page is read, the content streams of the pages that will be read or written
//! are checked as for every other operation ([`crate::pdf::content`]): a decompression
//! bomb is refused with `invalid_pdf` before MuPDF interprets it (MuPDF itself would spend
//! minutes on it), and a stream that fails to decode part-way is replaced by the part that
//! decodes, so the searchable PDF passes `qpdf --check`.
//!
//! # Languages
//!
//! [`OcrOptions::languages`] (Tesseract-style codes) chooses the recognition model once per
//! document ([`reader_for`]; the rules are in `ocr::languages`): none is the default
//! recogniser; a model other than the default is loaded at its first use in the process.
//! The JSON's `engine` names the model that read the pages. Words of such a request that
//! the languages' Hunspell dictionaries reject are corrected where one dictionary word
//! differs from them only in confusable letters (`ocr::lexicon`).
//!
//! # Page-parallel jobs
//!
//! A searchable PDF of many pages can be made in two steps on different processes: each
//! reads a range of pages with [`ocr_layer_pages`] (blocks and, per recognised page, the
//! recognition in raster pixels), and one writes the text layer of every page onto the
//! original document with [`apply_text_layer`]. Both steps run the same code as
//! [`ocr_document`], in the same order, so the result is the same document.
//!
//! # Coordinates
//!
//! Boxes in `blocks` are `[x0, y0, x1, y1]` in PDF points (1/72 inch) from the top-left
//! corner of the page as displayed (after its `/Rotate`), like `width`/`height`.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use mupdf::pdf::{Encryption, PdfDocument};
use mupdf::TextPageFlags;
use serde::{Deserialize, Deserializer, Serialize};

use crate::control::JobControl;
use crate::error::{EngineError, ErrorCode, MuPdfResultExt, Result};
use crate::pdf::content::repair_page_contents;
use crate::pdf::mcid::untag_costly_pages;
use crate::pdf::pages::selected_or_all;
use crate::pdf::save::{save_pdf, write_options};

use crate::ocr::input::open_input;
pub use crate::ocr::input::MAX_IMAGE_PIXELS;
use crate::ocr::json::blocks_json;
pub use crate::ocr::json::{BlockJson, LineJson, OcrJson, PageError, PageJson, ScriptJson, WordJson};
pub use crate::ocr::pdfa::PdfaLevel;
pub use crate::ocr::turn::PageTurn;

mod init;
mod layer_pages;
mod page;
mod render;

use init::{engine, ocr_failed};
pub use init::{ocr_init, ocr_ready, OcrInit, OcrTuning};
use layer_pages::add_layer_page;
pub use layer_pages::{read_layer_pages, write_layer_pages, LayerPage};
use page::{correct_words, engine_label, layer_text, read_image};
pub use page::{has_text_layer, ocr_page, reader_for, TEXT_PAGE_MIN_CHARS};
use render::render_for_ocr;
pub use render::{DEFAULT_OCR_DPI, MAX_OCR_DPI, MAX_OCR_SIDE, MIN_OCR_DPI, MIN_OCR_SIDE};

/// What to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OcrOutput {
    /// Only the JSON blocks.
    #[default]
    Blocks,
    /// A searchable PDF at `output` (the JSON blocks are returned too).
    SearchablePdf,
}

/// Options of [`ocr_document`]; the default reads every page into blocks with the default
/// recogniser.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OcrOptions {
    /// 0-based page indexes; default every page.
    pub pages: Option<Vec<i64>>,
    /// Refuse inputs with more pages (`page_limit`).
    pub max_pages: Option<u32>,
    /// Output kind.
    pub output: OcrOutput,
    /// Tesseract-style language codes to read (`eng`, `jpn`, ...); `None` is the default
    /// recogniser (Latin script and simplified Chinese). Chooses the recognition model
    /// (`ocr::languages`); an empty list or a code no model reads is `invalid_options`.
    pub languages: Option<Vec<String>>,
    /// Time a page may take in Tesseract before it fails (`ocr_timeout` in its JSON entry);
    /// default [`DEFAULT_PAGE_TIMEOUT`]. Given as `page_timeout_s`, in seconds; not positive
    /// is the default.
    #[serde(rename = "page_timeout_s", deserialize_with = "positive_seconds")]
    pub page_timeout: Option<Duration>,
    /// Write the searchable PDF as PDF/A ([`crate::ocr::pdfa`]); a document with what the
    /// level forbids and the engine does not convert is refused (`pdfa_unsupported`) before
    /// any page is read. Ignored for `blocks`, except by [`ocr_layer_pages`], which checks it
    /// so that a page-parallel job fails at its first task.
    pub pdfa: Option<PdfaLevel>,
    /// Searchable PDF: a page OCR read turned gets the `/Rotate` that shows it upright
    /// ([`crate::ocr::turn`]). Ignored for `blocks`.
    pub rotate_pages: bool,
    /// Searchable PDF: a page OCR read skewed is drawn straight, with its text layer. Ignored
    /// for `blocks`.
    pub deskew: bool,
}

impl OcrOptions {
    /// What the searchable PDF does to the pages OCR read.
    pub fn turn(&self) -> PageTurn {
        PageTurn { rotate_pages: self.rotate_pages, deskew: self.deskew }
    }
}

/// Seconds as a number, `None` unless positive and representable.
fn positive_seconds<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<Duration>, D::Error> {
    let seconds = Option::<f64>::deserialize(d)?;
    Ok(seconds.filter(|s| *s > 0.0).and_then(|s| Duration::try_from_secs_f64(s).ok()))
}

/// Without `languages`, a page the default recogniser reads with a mean character confidence
/// under this has its script detected (Tesseract OSD) and may be read by another recogniser.
/// Latin pages read at 0.98 or more (the corpus OCR pages: receipts 0.983-0.994, the others
/// 0.996-0.999); pages of other scripts at 0.54-0.83 (Cyrillic 0.83, Greek 0.78, Thai 0.75,
/// Hebrew 0.74, Hangul 0.65, Devanagari 0.55, Arabic 0.54). OSD alone took an all-capitals
/// Latin receipt for Cyrillic, confidently.
pub const AUTO_SCRIPT_BELOW: f32 = 0.9;

/// Time a page may take in Tesseract by default: a dense A4 page takes 5-20 s on one core.
pub const DEFAULT_PAGE_TIMEOUT: Duration = Duration::from_secs(120);

/// What [`ocr_document`] did.
#[derive(Debug, Clone, Serialize)]
pub struct OcrResult {
    /// Pages in the input.
    pub page_count: usize,
    /// Pages returned (recognised, or read from their text layer): what is billed.
    pub pages_processed: usize,
    /// The blocks, serialised.
    pub json: String,
    /// Size of the searchable PDF, 0 for blocks.
    pub output_bytes: u64,
}

/// OCRs the selected pages of `input` (PDF, JPEG, PNG or WebP).
pub fn ocr_document(
    input: &Path,
    output: Option<&Path>,
    options: &OcrOptions,
    control: &JobControl,
) -> Result<OcrResult> {
    read_document(input, output, options, None, control)
}

/// The blocks of the selected pages, as [`ocr_document`] returns them, and each recognised
/// page's recognition for [`apply_text_layer`] (pages that carry text have none). Writes no
/// PDF, whatever `options.output` says.
pub fn ocr_layer_pages(
    input: &Path,
    options: &OcrOptions,
    control: &JobControl,
) -> Result<(OcrResult, Vec<LayerPage>)> {
    if let Some(level) = options.pdfa {
        let doc = open_input(input, options.max_pages)?;
        let count = doc.page_count().ctx("counting pages")?;
        let pages = (0..count)
            .map(|i| doc.find_page(i).map(|p| (i as usize + 1, p)))
            .collect::<std::result::Result<Vec<_>, _>>()
            .ctx("finding the pages")?;
        // The check decodes every page's content: bounded first, as a whole run does.
        repair_page_contents(pages.iter().map(|(n, p)| (*n, p)), &JobControl::new())?;
        drop(pages);
        refuse_unless_pdfa(&doc, level)?;
    }
    let options = OcrOptions { output: OcrOutput::Blocks, pdfa: None, ..options.clone() };
    let mut layer = Vec::new();
    let result = read_document(input, None, &options, Some(&mut layer), control)?;
    Ok((result, layer))
}

/// Writes `pages` (from [`ocr_layer_pages`], in page order) as the text layer of `input`
/// and saves the searchable PDF at `output`, as [`ocr_document`] does for its own pages.
/// Returns the bytes written.
pub fn apply_text_layer(
    input: &Path,
    output: &Path,
    pages: &[LayerPage],
    pdfa: Option<PdfaLevel>,
    turn: PageTurn,
    control: &JobControl,
) -> Result<u64> {
    control.checkpoint()?;
    let mut doc = open_input(input, None)?;
    let untagged = untag_costly_pages(&doc);
    let page_count = doc.page_count().ctx("counting pages")? as usize;
    if let Some(p) = pages.iter().find(|p| p.page >= page_count) {
        return Err(EngineError::invalid_options(format!(
            "text layer for page {} of a document of {page_count} pages",
            p.page
        )));
    }
    let page_objects = (0..page_count)
        .map(|i| doc.find_page(i as i32).map(|p| (i + 1, p)))
        .collect::<std::result::Result<Vec<_>, _>>()
        .ctx("finding the pages")?;
    repair_page_contents(page_objects.iter().map(|(n, p)| (*n, p)), &JobControl::new())?;
    drop(page_objects);
    if let Some(level) = pdfa {
        refuse_unless_pdfa(&doc, level)?;
    }
    control.start(pages.len() as u64)?;
    let mut layer = crate::ocr::searchable::TextLayer::new();
    for p in pages {
        let page = doc.load_page(p.page as i32).ctx("loading the page")?;
        let bounds = page.bounds().ctx("measuring the page")?;
        let mut page_obj = doc.find_page(p.page as i32).ctx("finding the page")?;
        add_layer_page(&mut layer, &mut doc, &mut page_obj, bounds, p.scale, &p.text, turn)?;
        control.advance()?;
    }
    layer.finish()?;
    untagged.restore();
    if let Some(level) = pdfa {
        crate::ocr::pdfa::convert(&mut doc, level, std::time::SystemTime::now())?;
    }
    let bytes = save_pdf(&doc, output, write_options(Encryption::None), control)?;
    control.finish();
    Ok(bytes)
}

/// Refuses a document that cannot be written as PDF/A at `level` (`pdfa_unsupported`,
/// naming what keeps it from being one).
fn refuse_unless_pdfa(doc: &PdfDocument, level: PdfaLevel) -> Result<()> {
    let problems = crate::ocr::pdfa::problems(doc)?;
    if problems.is_empty() {
        return Ok(());
    }
    let PdfaLevel::A2b = level;
    Err(EngineError::new(
        ErrorCode::PdfaUnsupported,
        format!("this PDF cannot be written as PDF/A-2b: it has {}; these are not converted", problems.join(", ")),
    ))
}

fn read_document(
    input: &Path,
    output: Option<&Path>,
    options: &OcrOptions,
    mut layer_pages: Option<&mut Vec<LayerPage>>,
    control: &JobControl,
) -> Result<OcrResult> {
    control.checkpoint()?;
    let engine = engine()?;
    let reader = reader_for(engine, options.languages.as_deref())?;
    let timeout = options.page_timeout.unwrap_or(DEFAULT_PAGE_TIMEOUT);
    let auto_script = options.languages.is_none() && engine.detects_scripts();
    let mut doc = open_input(input, options.max_pages)?;
    // Pages MuPDF would take hours to run are read as untagged, and saved as they were.
    let untagged = untag_costly_pages(&doc);
    let page_count = doc.page_count().ctx("counting pages")? as usize;
    if let Some(cap) = options.max_pages {
        if page_count > cap as usize {
            return Err(EngineError::new(
                ErrorCode::PageLimit,
                format!("the document has {page_count} pages, more than the limit of {cap}"),
            ));
        }
    }
    let selected: BTreeSet<usize> = selected_or_all(options.pages.as_deref(), page_count)?;
    // A searchable PDF writes every page; blocks read only the selected ones.
    let checked: Vec<usize> = match options.output {
        OcrOutput::SearchablePdf => (0..page_count).collect(),
        _ => selected.iter().copied().collect(),
    };
    let page_objects = checked
        .iter()
        .map(|&i| doc.find_page(i as i32).map(|p| (i + 1, p)))
        .collect::<std::result::Result<Vec<_>, _>>()
        .ctx("finding the pages")?;
    repair_page_contents(page_objects.iter().map(|(n, p)| (*n, p)), &JobControl::new())?;
    drop(page_objects);
    // After the repair, which bounds what the check decodes.
    if let (Some(level), OcrOutput::SearchablePdf) = (options.pdfa, options.output) {
        refuse_unless_pdfa(&doc, level)?;
    }
    control.start(selected.len() as u64)?;
    let mut pages = Vec::with_capacity(selected.len());
    let mut processed = 0usize;
    let mut layer = crate::ocr::searchable::TextLayer::new();
    for &index in &selected {
        let page = doc.load_page(index as i32).ctx("loading the page")?;
        let bounds = page.bounds().ctx("measuring the page")?;
        let (pw, ph) = (bounds.x1 - bounds.x0, bounds.y1 - bounds.y0);
        let text = page.to_text_page(TextPageFlags::empty()).and_then(|t| t.to_text()).unwrap_or_default();
        if has_text_layer(&text) {
            pages.push(PageJson::has_text(index, pw, ph, layer_text(&text)));
            processed += 1;
            control.advance()?;
            continue;
        }
        let mut page_obj = doc.find_page(index as i32).ctx("finding the page")?;
        let (dpi, sx, sy, image) = render_for_ocr(engine.timing(), &page, &page_obj, bounds)?;
        // Without languages, a page the default recogniser reads doubtfully has its script
        // detected, which may ask for another reader.
        let mut default_read = None;
        let mut detected = None;
        let mut page_reader = reader.clone();
        if auto_script {
            let read = engine.recognise_with(&image, 0).map_err(ocr_failed)?;
            if read.mean_confidence() < AUTO_SCRIPT_BELOW {
                detected = engine.detect_script(&image, dpi).map_err(ocr_failed)?;
                if let Some(o) = &detected {
                    page_reader = engine.reader_for_script(o);
                }
            }
            default_read = Some(read);
        }
        let read = match (default_read, &detected) {
            (Some(read), _) if page_reader == reader => Ok((read, detected)),
            (Some(read), Some(verdict)) => {
                match read_image(engine, &page_reader, &image, dpi, timeout, control, detected.as_ref()) {
                    Ok((guessed, osd))
                        if !ocr::tesseract::guess_replaces_default(
                            verdict.script_confidence,
                            read.mean_confidence(),
                            guessed.mean_confidence(),
                        ) =>
                    {
                        page_reader = reader.clone();
                        Ok((read, osd))
                    }
                    other => other,
                }
            }
            _ => read_image(engine, &page_reader, &image, dpi, timeout, control, detected.as_ref()),
        };
        let (mut result, osd) = match read {
            Ok(read) => read,
            // The page fails, the job goes on: Tesseract stopped at its deadline.
            Err(ocr::OcrError::Timeout(message)) => {
                pages.push(PageJson::failed(index, pw, ph, ErrorCode::OcrTimeout.as_str(), message));
                control.advance()?;
                continue;
            }
            Err(e) => return Err(ocr_failed(e)),
        };
        let page_languages = match (&page_reader, &options.languages) {
            (_, Some(named)) => Some(named.clone()),
            (ocr::Reader::Tesseract(codes), None) => Some(codes.clone()),
            (ocr::Reader::Model(_), None) => None,
        };
        correct_words(&mut result, page_languages.as_deref());
        control.checkpoint()?;
        let blocks = blocks_json(&result, sx, sy, pw, ph);
        if options.output == OcrOutput::SearchablePdf {
            add_layer_page(&mut layer, &mut doc, &mut page_obj, bounds, [sx, sy], &result, options.turn())?;
        }
        let mut page_json = PageJson::recognised(index, pw, ph, dpi, &result, blocks);
        page_json.script = osd.map(ScriptJson::from);
        if page_reader != reader {
            page_json.engine = Some(engine_label(engine, &page_reader));
        }
        pages.push(page_json);
        if let Some(out) = layer_pages.as_deref_mut() {
            out.push(LayerPage { page: index, scale: [sx, sy], text: result });
        }
        processed += 1;
        control.advance()?;
    }
    let json = serde_json::to_string(&OcrJson {
        engine: engine_label(engine, &reader),
        unit: "pt",
        origin: "top-left",
        pages,
    })
    .map_err(|e| EngineError::new(ErrorCode::EngineError, format!("serialising the result: {e}")))?;
    layer.finish()?;
    untagged.restore();
    if let (Some(level), OcrOutput::SearchablePdf) = (options.pdfa, options.output) {
        crate::ocr::pdfa::convert(&mut doc, level, std::time::SystemTime::now())?;
    }
    let output_bytes = match (options.output, output) {
        (OcrOutput::SearchablePdf, Some(out)) => save_pdf(&doc, out, write_options(Encryption::None), control)?,
        (OcrOutput::SearchablePdf, None) => {
            return Err(EngineError::invalid_options("a searchable PDF needs an output path"))
        }
        _ => 0,
    };
    control.finish();
    Ok(OcrResult { page_count, pages_processed: processed, json, output_bytes })
}
