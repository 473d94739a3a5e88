//! Addon exports of OCR: `ocrInit` (once per process), `ocr`, and for a page-parallel
//! searchable PDF `ocrLayerPages` (a task) and `ocrApplyLayer` (the fan-in). Same conventions
//! as the page operations (see the crate documentation: Promise, engine thread pool, `code` on
//! errors, `JobControl` for progress and cancellation; options and results are the engine's
//! structs).

use engine::ocr::pipeline::{self as pipeline, OcrInit, OcrOptions};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::runtime::{control_of, options_from, spawn_job, JobControl};

/// Loads ONNX Runtime and the models (`engine::ocr::pipeline::OcrInit`, hashes checked), with
/// the process's OCR settings. Later calls resolve at once. Rejects with `ocr_unavailable`
/// when a file is missing or does not match the manifest.
#[napi(ts_args_type = "options: OcrInitOptions", ts_return_type = "Promise<void>")]
pub fn ocr_init<'env>(env: &'env Env, options: Option<Unknown<'env>>) -> Result<Object<'env>> {
    let options = options_from::<OcrInit>(env, options);
    spawn_job(env, move || pipeline::ocr_init(&OcrInit { tuning: crate::settings::settings().ocr.clone(), ..options? }))
}

/// OCRs a PDF or an image (JPEG, PNG, WebP) (`engine::ocr::pipeline::OcrOptions`). `output` is
/// the searchable PDF's path (unused for `blocks`).
#[napi(
    ts_args_type = "input: string, output: string | null, options: OcrOptions, control?: JobControl | null",
    ts_return_type = "Promise<OcrResult>"
)]
pub fn ocr<'env>(
    env: &'env Env,
    input: String,
    output: Option<String>,
    options: Option<Unknown<'env>>,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let (options, control) = (options_from::<OcrOptions>(env, options), control_of(control));
    spawn_job(env, move || {
        let output = output.map(std::path::PathBuf::from);
        pipeline::ocr_document(input.as_ref(), output.as_deref(), &options?, &control)
    })
}

/// OCRs the pages into blocks, as `ocr` does, and writes each recognised page's recognition
/// (JSON) to `layerOutput`, for `ocrApplyLayer` on another process (a task of a page-parallel
/// searchable PDF). `options.pdfa` is checked only (the document can be one), so that such a
/// job fails at its first task.
#[napi(
    ts_args_type = "input: string, layerOutput: string, options: OcrOptions, control?: JobControl | null",
    ts_return_type = "Promise<OcrResult>"
)]
pub fn ocr_layer_pages<'env>(
    env: &'env Env,
    input: String,
    layer_output: String,
    options: Option<Unknown<'env>>,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let (options, control) = (options_from::<OcrOptions>(env, options), control_of(control));
    spawn_job(env, move || {
        let (result, layer) = pipeline::ocr_layer_pages(input.as_ref(), &options?, &control)?;
        pipeline::write_layer_pages(layer_output.as_ref(), &layer)?;
        Ok(result)
    })
}

/// Writes the text layer read by `ocrLayerPages` onto the original document: `layers` are
/// those files in page order (one per range of pages), `options` the options of that OCR
/// (`pdfa`, `rotate_pages` and `deskew` apply); the searchable PDF is the one `ocr` with
/// output `searchable_pdf` and the same options would have written. Resolves to its bytes.
#[napi(
    ts_args_type = "input: string, output: string, layers: string[], options?: OcrOptions | null, control?: JobControl | null",
    ts_return_type = "Promise<number>"
)]
pub fn ocr_apply_layer<'env>(
    env: &'env Env,
    input: String,
    output: String,
    layers: Vec<String>,
    options: Option<Unknown<'env>>,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let (options, control) = (options_from::<OcrOptions>(env, options), control_of(control));
    spawn_job(env, move || {
        let options = options?;
        let mut pages = Vec::new();
        for path in &layers {
            pages.extend(pipeline::read_layer_pages(path.as_ref())?);
        }
        pipeline::apply_text_layer(input.as_ref(), output.as_ref(), &pages, options.pdfa, options.turn(), &control)
    })
}
