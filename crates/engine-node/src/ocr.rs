//! Addon exports of OCR: `ocrInit` (once per process), `ocr`, and `ocrApplyLayer` (the
//! fan-in of a page-parallel searchable PDF). Same conventions as the
//! page operations (see the crate documentation: Promise, engine thread pool, `code` on errors,
//! `JobControl` for progress and cancellation).

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::runtime::{control_of, integers, spawn_job, JobControl};

/// Where ONNX Runtime and the models are (resolved by the TypeScript side).
#[napi(object)]
pub struct OcrInitOptions {
    /// Path of `libonnxruntime.so.1` (from the npm package onnxruntime-node), used when the
    /// manifest's ONNX Runtime with OpenVINO is not installed or not chosen (`OcrTuning::openvino`).
    pub ort_library: String,
    /// Path of models/manifest.json.
    pub manifest: String,
    /// Directory the manifest's files are relative to (node_modules).
    pub model_root: String,
    /// ONNX Runtime intra-op threads per model; default 1.
    pub intra_threads: Option<u32>,
    /// Longest side of the detection input in pixels; default `ocr::DET_MAX_SIDE` (1120).
    pub det_max_side: Option<u32>,
    /// A file every process on the machine locks around each model run, so that one run
    /// at a time uses the intra-op threads; default none.
    pub machine_lock: Option<String>,
    /// Tesseract's traineddata directory (`TESSDATA_PREFIX`); default Debian's.
    pub tessdata: Option<String>,
}

/// Loads ONNX Runtime and the models (hashes checked). Later calls resolve at once.
/// Rejects with `ocr_unavailable` when a file is missing or does not match the manifest.
#[napi(ts_return_type = "Promise<void>")]
pub fn ocr_init(env: &Env, options: OcrInitOptions) -> Result<Object<'_>> {
    spawn_job(env, move || {
        engine::ocr::pipeline::ocr_init(&engine::ocr::pipeline::OcrInit {
            ort_library: options.ort_library.into(),
            manifest: options.manifest.into(),
            model_root: options.model_root.into(),
            intra_threads: options.intra_threads.unwrap_or(1) as usize,
            det_max_side: options.det_max_side.map(|v| v as usize),
            machine_lock: options.machine_lock.map(Into::into),
            tuning: crate::settings::settings().ocr.clone(),
            tessdata: options.tessdata.map(Into::into),
        })
    })
}

#[napi(object)]
pub struct OcrOptions {
    /// `blocks` (JSON only) or `searchable_pdf` (also writes `output`).
    #[napi(ts_type = "'blocks' | 'searchable_pdf'")]
    pub output: String,
    /// 0-based page indexes; default every page.
    pub pages: Option<Vec<f64>>,
    /// Tesseract-style language codes (`eng`, `jpn`, `rus`, `script/Cyrillic`, ...): an ONNX
    /// recogniser when one reads them all, else Tesseract with the installed traineddata;
    /// default the Latin + simplified Chinese recogniser, or per page the reader of its detected
    /// script. Rejects with `invalid_options` (naming the supported codes and how to install a
    /// missing one) when empty or when a code is neither.
    pub languages: Option<Vec<String>>,
    /// With `blocks`: also write each recognised page's recognition (JSON) to this path, for
    /// `ocrApplyLayer` on another process (a page-parallel searchable PDF).
    pub layer_output: Option<String>,
    /// Seconds a page may take in Tesseract before it fails (`ocr_timeout` in its JSON entry;
    /// the job goes on); default 120.
    pub page_timeout_s: Option<f64>,
    /// `"2b"`: write the searchable PDF as PDF/A-2b (see engine::ocr::pdfa); with
    /// `layerOutput`, only checks the document can be one.
    pub pdfa: Option<String>,
    /// Searchable PDF: add to a page OCR read turned the `/Rotate` that shows it upright
    /// (engine::ocr::turn); default false (the service passes the API's default, true).
    pub rotate_pages: Option<bool>,
    /// Searchable PDF: draw a page OCR read skewed straight, with its text layer; default false.
    pub deskew: Option<bool>,
}

/// How `ocrApplyLayer` writes the searchable PDF: the options `ocr` took for it.
#[napi(object)]
pub struct OcrLayerOptions {
    /// `"2b"`: write it as PDF/A-2b.
    pub pdfa: Option<String>,
    /// As `OcrOptions.rotatePages`.
    pub rotate_pages: Option<bool>,
    /// As `OcrOptions.deskew`.
    pub deskew: Option<bool>,
}

#[napi(object)]
pub struct OcrResult {
    /// Pages in the input.
    pub page_count: u32,
    /// Pages OCRed (pages that already carry text are not).
    pub pages_processed: u32,
    /// The blocks as a JSON string (`{unit, origin, pages: [...]}`; see docs/ocr.md).
    pub json: String,
    /// Bytes of the searchable PDF; 0 for `blocks`.
    pub output_bytes: f64,
}

/// OCRs a PDF or an image (JPEG, PNG, WebP). `output` is the searchable PDF's path
/// (ignored for `blocks`).
#[napi(ts_return_type = "Promise<OcrResult>")]
pub fn ocr<'env>(
    env: &'env Env,
    input: String,
    output: Option<String>,
    options: OcrOptions,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let control = control_of(control);
    spawn_job(env, move || {
        let kind = match options.output.as_str() {
            "blocks" => engine::ocr::pipeline::OcrOutput::Blocks,
            "searchable_pdf" => engine::ocr::pipeline::OcrOutput::SearchablePdf,
            other => {
                return Err(engine::EngineError::new(
                    engine::ErrorCode::InvalidOptions,
                    format!("output must be blocks or searchable_pdf, not {other}"),
                ))
            }
        };
        let opts = engine::ocr::pipeline::OcrOptions {
            pages: options.pages.as_deref().map(|p| integers(p, "pages[]")).transpose()?,
            max_pages: None,
            output: kind,
            languages: options.languages,
            page_timeout: options.page_timeout_s.filter(|s| *s > 0.0).map(std::time::Duration::from_secs_f64),
            pdfa: pdfa_level(options.pdfa.as_deref())?,
            turn: page_turn(options.rotate_pages, options.deskew),
        };
        let r = match (&options.layer_output, kind) {
            (Some(path), engine::ocr::pipeline::OcrOutput::Blocks) => {
                let (r, layer) = engine::ocr::pipeline::ocr_layer_pages(input.as_ref(), &opts, &control)?;
                engine::ocr::pipeline::write_layer_pages(path.as_ref(), &layer)?;
                r
            }
            (Some(_), _) => {
                return Err(engine::EngineError::new(
                    engine::ErrorCode::InvalidOptions,
                    "layerOutput is only for output blocks",
                ));
            }
            (None, _) => {
                let out = output.map(std::path::PathBuf::from);
                engine::ocr::pipeline::ocr_document(input.as_ref(), out.as_deref(), &opts, &control)?
            }
        };
        Ok(OcrResult {
            page_count: r.page_count as u32,
            pages_processed: r.pages_processed as u32,
            json: r.json,
            output_bytes: r.output_bytes as f64,
        })
    })
}

/// Writes the text layer read by `ocr` with `layerOutput` onto the original document:
/// `layers` are those files in page order (one per range of pages); the searchable PDF is
/// the one `ocr` with output `searchable_pdf` and the same `options` would have written.
/// Resolves to its bytes.
#[napi(ts_return_type = "Promise<number>")]
pub fn ocr_apply_layer<'env>(
    env: &'env Env,
    input: String,
    output: String,
    layers: Vec<String>,
    options: Option<OcrLayerOptions>,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let control = control_of(control);
    let options = options.unwrap_or(OcrLayerOptions { pdfa: None, rotate_pages: None, deskew: None });
    spawn_job(env, move || {
        let pdfa = pdfa_level(options.pdfa.as_deref())?;
        let turn = page_turn(options.rotate_pages, options.deskew);
        let mut pages = Vec::new();
        for path in &layers {
            pages.extend(engine::ocr::pipeline::read_layer_pages(path.as_ref())?);
        }
        let bytes =
            engine::ocr::pipeline::apply_text_layer(input.as_ref(), output.as_ref(), &pages, pdfa, turn, &control)?;
        Ok(bytes as f64)
    })
}

/// What the searchable PDF does to the pages OCR read; absent options are false.
fn page_turn(rotate_pages: Option<bool>, deskew: Option<bool>) -> engine::ocr::pipeline::PageTurn {
    engine::ocr::pipeline::PageTurn { rotate_pages: rotate_pages.unwrap_or(false), deskew: deskew.unwrap_or(false) }
}

/// The PDF/A level of the `pdfa` option: none, or `"2b"`.
fn pdfa_level(
    value: Option<&str>,
) -> std::result::Result<Option<engine::ocr::pipeline::PdfaLevel>, engine::EngineError> {
    match value {
        None => Ok(None),
        Some("2b") => Ok(Some(engine::ocr::pipeline::PdfaLevel::A2b)),
        Some(other) => Err(engine::EngineError::new(
            engine::ErrorCode::InvalidOptions,
            format!("pdfa must be \"2b\", not {other:?}"),
        )),
    }
}
