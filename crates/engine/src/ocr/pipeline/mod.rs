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
//! document ([`recogniser_for`]; the rules are in `ocr::languages`): none is the default
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
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use mupdf::pdf::{Encryption, PdfDocument, PdfObject};
use mupdf::{Colorspace, Matrix, TextPageFlags};
use serde::{Deserialize, Serialize};

use crate::control::JobControl;
use crate::error::{EngineError, ErrorCode, MuPdfResultExt, Result};
use crate::pdf::content::repair_page_contents;
use crate::pdf::pages::selected_or_all;
use crate::pdf::save::{save_pdf, write_options};

use crate::ocr::input::open_input;
pub use crate::ocr::input::MAX_IMAGE_PIXELS;
use crate::ocr::json::blocks_json;
pub use crate::ocr::json::{BlockJson, LineJson, OcrJson, PageError, PageJson, ScriptJson, WordJson};
pub use crate::ocr::pdfa::PdfaLevel;
use crate::ocr::turn;
pub use crate::ocr::turn::PageTurn;
use crate::pdf::mcid::untag_costly_pages;

/// Resolution of pages without images.
pub const DEFAULT_OCR_DPI: f32 = 300.0;
/// Resolution up to which a small scan (its raster under [`MIN_OCR_SIDE`]) is enlarged.
pub const MIN_OCR_DPI: f32 = 150.0;
/// Longest side under which a scan's raster is enlarged (towards [`MIN_OCR_DPI`]). Small
/// scans of small print (the SROIE receipts, 1,500-1,700 px) read better from MuPDF's
/// enlargement than from the recogniser's bilinear crop of their own pixels (bag-of-words
/// 9.2% and 7.9% vs 11.8% and 11.9%), while a full-page scan read at its own pixels is
/// read faster and, for the LinnSequencer brochure (3,300 px, no resolution tag, enlarged
/// 1.3x before), better (CER 1.8% vs 14.6%).
pub const MIN_OCR_SIDE: f32 = 2400.0;
/// Highest render resolution (a 2400-dpi scan is read at this).
pub const MAX_OCR_DPI: f32 = 400.0;
/// Longest side of an OCR raster, in pixels.
pub const MAX_OCR_SIDE: f32 = 4200.0;
/// Non-blank characters from which a page counts as already carrying text.
pub const TEXT_PAGE_MIN_CHARS: usize = 16;

/// Where the engine finds ONNX Runtime and the models (handed over once per process).
#[derive(Debug, Clone)]
pub struct OcrInit {
    /// Path of `libonnxruntime.so.1`, used when the manifest's OpenVINO build is not
    /// (`ocr::OcrConfig::ort_library`).
    pub ort_library: PathBuf,
    /// `models/manifest.json`.
    pub manifest: PathBuf,
    /// Directory the manifest's `file` entries are relative to (`node_modules`).
    pub model_root: PathBuf,
    /// ONNX Runtime intra-op threads per model.
    pub intra_threads: usize,
    /// Longest side of the detection input in pixels (default [`ocr::DET_MAX_SIDE`]).
    pub det_max_side: Option<usize>,
    /// File locked around every model run by every process on the machine (see
    /// [`ocr::OcrConfig::machine_lock`]); `None` runs without it.
    pub machine_lock: Option<PathBuf>,
    /// Settings for comparisons and diagnostics (default: what the service runs).
    pub tuning: OcrTuning,
    /// Tesseract's traineddata directory; `None`: Debian's (`ocr::OcrConfig::tessdata`).
    pub tessdata: Option<PathBuf>,
}

pub use ocr::OcrTuning;

static OCR: OnceLock<ocr::Ocr> = OnceLock::new();
static INIT_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn ocr_failed(e: ocr::OcrError) -> EngineError {
    let code = match e {
        ocr::OcrError::Init(_) => ErrorCode::OcrUnavailable,
        ocr::OcrError::Cancelled => ErrorCode::Cancelled,
        ocr::OcrError::Timeout(_) => ErrorCode::OcrTimeout,
        _ => ErrorCode::EngineError,
    };
    EngineError::new(code, e.to_string())
}

/// Loads ONNX Runtime and the models (verifying their hashes). Idempotent: later calls
/// return at once.
pub fn ocr_init(init: &OcrInit) -> Result<()> {
    let _guard = INIT_LOCK.lock().map_err(|_| EngineError::new(ErrorCode::EngineError, "OCR init lock"))?;
    if OCR.get().is_some() {
        return Ok(());
    }
    let models = ocr::ModelFiles::from_manifest(&init.manifest, &init.model_root).map_err(ocr_failed)?;
    let engine = ocr::Ocr::new(&ocr::OcrConfig {
        ort_library: init.ort_library.clone(),
        models,
        intra_threads: init.intra_threads.max(1),
        det_max_side: init.det_max_side.unwrap_or(ocr::DET_MAX_SIDE),
        machine_lock: init.machine_lock.clone(),
        tuning: init.tuning.clone(),
        tessdata: init.tessdata.clone(),
    })
    .map_err(ocr_failed)?;
    let _ = OCR.set(engine);
    Ok(())
}

/// Whether [`ocr_init`] succeeded in this process.
pub fn ocr_ready() -> bool {
    OCR.get().is_some()
}

fn engine() -> Result<&'static ocr::Ocr> {
    OCR.get()
        .ok_or_else(|| EngineError::new(ErrorCode::OcrUnavailable, "OCR is not initialised in this process (ocrInit)"))
}

/// What to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OcrOutput {
    /// Only the JSON blocks.
    #[default]
    Blocks,
    /// A searchable PDF at `output` (the JSON blocks are returned too).
    SearchablePdf,
}

/// Options of [`ocr_document`]; the default reads every page into blocks with the default
/// recogniser.
#[derive(Debug, Clone, Default)]
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
    /// default [`DEFAULT_PAGE_TIMEOUT`].
    pub page_timeout: Option<Duration>,
    /// Write the searchable PDF as PDF/A ([`crate::ocr::pdfa`]); a document with what the
    /// level forbids and the engine does not convert is refused (`pdfa_unsupported`) before
    /// any page is read. Ignored for `blocks`, except by [`ocr_layer_pages`], which checks it
    /// so that a page-parallel job fails at its first task.
    pub pdfa: Option<PdfaLevel>,
    /// What the searchable PDF does to the pages OCR read: turned upright, drawn straight
    /// ([`crate::ocr::turn`]). Ignored for `blocks`.
    pub turn: PageTurn,
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
#[derive(Debug, Clone)]
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

/// One recognised page as [`ocr_layer_pages`] read it: what [`apply_text_layer`] needs to
/// write its text layer without rendering or recognising it again.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LayerPage {
    /// 0-based page index.
    pub page: usize,
    /// Raster pixel -> displayed point scales (x, y) of the page's recognition.
    pub scale: [f32; 2],
    /// The recognition (words corrected), in raster pixels.
    pub text: ocr::PageText,
}

/// Largest image side on the page divided by the page's largest side in inches.
fn native_dpi(page: &PdfObject, page_w: f32, page_h: f32) -> Option<f32> {
    let res = page.get_dict_inheritable("Resources").ok()??;
    let xobjects = res.get_dict("XObject").ok()??;
    let mut best: Option<f32> = None;
    let n = xobjects.dict_len().ok()?;
    for i in 0..n {
        let Some(x) = xobjects.get_dict_val(i as i32).ok().flatten() else { continue };
        let is_image =
            x.get_dict("Subtype").ok().flatten().and_then(|s| s.as_name().ok()).is_some_and(|n| n == b"Image");
        if !is_image {
            continue;
        }
        let w = x.get_dict("Width").ok().flatten().and_then(|v| v.as_int().ok()).unwrap_or(0);
        let h = x.get_dict("Height").ok().flatten().and_then(|v| v.as_int().ok()).unwrap_or(0);
        let side = w.max(h) as f32;
        let page_side = page_w.max(page_h) / 72.0;
        if side > 0.0 && page_side > 0.0 {
            let dpi = side / page_side;
            best = Some(best.map_or(dpi, |b: f32| b.max(dpi)));
        }
    }
    best
}

/// Whether a page's text (as MuPDF extracts it) makes it a page that already carries text:
/// at least [`TEXT_PAGE_MIN_CHARS`] non-blank characters. The rule of [`ocr_document`],
/// shared with pdf -> docx.
pub fn has_text_layer(text: &str) -> bool {
    text.chars().filter(|c| !c.is_whitespace()).count() >= TEXT_PAGE_MIN_CHARS
}

/// A text layer as MuPDF extracts it, in the JSON's form: lines without trailing blanks,
/// runs of blank lines (MuPDF's block breaks) as one empty line, no blank start or end.
fn layer_text(text: &str) -> String {
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

/// Renders a loaded page in grey at its OCR resolution. Returns the dpi, the pixel ->
/// displayed point scales (x, y) and the pixels.
fn render_for_ocr(
    timing: bool,
    page: &mupdf::Page,
    page_obj: &PdfObject,
    bounds: mupdf::Rect,
) -> Result<(f32, f32, f32, ocr::Image)> {
    let (pw, ph) = (bounds.x1 - bounds.x0, bounds.y1 - bounds.y0);
    let longest_pts = pw.max(ph).max(1.0);
    let mut dpi = match native_dpi(page_obj, pw, ph) {
        // A scan is read at its own pixels: rendering it larger only costs time (MuPDF's
        // scaler, a bigger raster to shrink for detection and to crop lines from) and adds
        // no detail. Only a small image (see [`MIN_OCR_SIDE`]) is enlarged, up to
        // MIN_OCR_DPI.
        Some(native) => {
            let small = (MIN_OCR_SIDE * 72.0 / longest_pts).min(MIN_OCR_DPI);
            native.max(small).min(MAX_OCR_DPI)
        }
        None => DEFAULT_OCR_DPI,
    };
    if longest_pts * dpi / 72.0 > MAX_OCR_SIDE {
        dpi = MAX_OCR_SIDE * 72.0 / longest_pts;
    }
    let scale = dpi / 72.0;
    let mut timer = ocr::StageTimer::new(timing);
    // Displayed page coordinates start at the bounds' origin.
    let mut ctm = Matrix::new_translate(-bounds.x0, -bounds.y0);
    ctm.concat(Matrix::new_scale(scale, scale));
    let pix = page.to_pixmap(&ctm, &Colorspace::device_gray(), false, true).ctx("rendering the page")?;
    let (w, h) = (pix.width() as usize, pix.height() as usize);
    let n = pix.n() as usize;
    let stride = pix.stride() as usize;
    let samples = pix.samples();
    let mut grey = Vec::with_capacity(w * h);
    for y in 0..h {
        let row = &samples[y * stride..y * stride + w * n];
        grey.extend(row.chunks_exact(n).map(|p| p[0]));
    }
    drop(pix);
    timer.mark(&format!("render {w}x{h} {dpi:.0}dpi"));
    let image = ocr::Image::new(w, h, 1, grey).map_err(ocr_failed)?;
    Ok((dpi, pw / w.max(1) as f32, ph / h.max(1) as f32, image))
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
/// text layer; see [`has_text_layer`]). Needs [`ocr_init`].
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
fn correct_words(result: &mut ocr::PageText, languages: Option<&[String]>) {
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
fn engine_label(engine: &ocr::Ocr, reader: &ocr::Reader) -> String {
    match reader {
        ocr::Reader::Model(i) => engine.engine_name(*i).to_string(),
        ocr::Reader::Tesseract(_) => format!("tesseract-{}", ocr::tesseract::Tesseract::version()),
    }
}

/// Reads a rendered page with `reader`: the text and what script detection said.
fn read_image(
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

/// Writes [`LayerPage`]s to a JSON file (an array) for [`read_layer_pages`].
pub fn write_layer_pages(path: &Path, pages: &[LayerPage]) -> Result<()> {
    let failed =
        |e: &dyn std::fmt::Display| EngineError::new(ErrorCode::EngineError, format!("writing the text layer: {e}"));
    let file = std::fs::File::create(path).map_err(|e| failed(&e))?;
    let mut w = BufWriter::new(file);
    serde_json::to_writer(&mut w, pages).map_err(|e| failed(&e))?;
    w.flush().map_err(|e| failed(&e))
}

/// Reads the [`LayerPage`]s [`write_layer_pages`] wrote.
pub fn read_layer_pages(path: &Path) -> Result<Vec<LayerPage>> {
    let failed =
        |e: &dyn std::fmt::Display| EngineError::new(ErrorCode::EngineError, format!("reading the text layer: {e}"));
    let file = std::fs::File::open(path).map_err(|e| failed(&e))?;
    serde_json::from_reader(BufReader::new(file)).map_err(|e| failed(&e))
}

/// Appends a recognised page's words to its text layer, and turns the page as `turn` asks.
/// `scale` maps raster pixels to displayed points from the top-left of `bounds`.
fn add_layer_page(
    layer: &mut crate::ocr::searchable::TextLayer,
    doc: &mut PdfDocument,
    page_obj: &mut PdfObject,
    bounds: mupdf::Rect,
    scale: [f32; 2],
    text: &ocr::PageText,
    turn: PageTurn,
) -> Result<()> {
    let [sx, sy] = scale;
    // Displayed points -> PDF user space of this page.
    let page_ctm = page_obj.page_ctm().ctx("reading the page matrix")?;
    let inv = page_ctm.invert().unwrap_or(Matrix::IDENTITY);
    let to_user = |p: [f32; 2]| -> [f32; 2] {
        let (x, y) = inv.transform_xy(p[0] * sx + bounds.x0, p[1] * sy + bounds.y0);
        [x, y]
    };
    let centre = to_user([(bounds.x1 - bounds.x0) / 2.0 / sx, (bounds.y1 - bounds.y0) / 2.0 / sy]);
    turn::add_turned_page(layer, doc, page_obj, text, &to_user, centre, turn)
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
            if page_reader == reader {
                default_read = Some(read);
            }
        }
        let read = match default_read {
            Some(read) => Ok((read, detected)),
            None => read_image(engine, &page_reader, &image, dpi, timeout, control, detected.as_ref()),
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
            add_layer_page(&mut layer, &mut doc, &mut page_obj, bounds, [sx, sy], &result, options.turn)?;
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
