//! Addon exports of the engine's page work: `renderJpeg`, `renderJoin`, `redact`, `redactBurn`,
//! `redactAssemble`, `compress`. Same conventions as the page operations (crate documentation:
//! Promise, engine thread pool, `code` on errors, `JobControl` for progress and cancellation;
//! options and results are the engine's structs). The process's settings (`configure`) fill in
//! the fields of those structs that are settings, not options of a call.

use std::path::Path;

use engine::pagework::{compress, redact, render};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::runtime::{control_of, options_from, spawn_job, JobControl};
use crate::settings::settings;

/// Renders PDF pages to JPEG (`engine::pagework::render::RenderOptions`): one page -> a JPEG
/// file, several -> a ZIP (stored) of `page-NNNN.jpg` (1-based input page numbers).
#[napi(
    ts_args_type = "input: string, output: string, options: RenderOptions, control?: JobControl | null",
    ts_return_type = "Promise<RenderResult>"
)]
pub fn render_jpeg<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: Option<Unknown<'env>>,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let (options, control) = (options_from::<render::RenderOptions>(env, options), control_of(control));
    spawn_job(env, move || {
        let options = render::RenderOptions { jpeg_encoder: settings().jpeg_encoder, ..options? };
        render::render_jpeg(input.as_ref(), output.as_ref(), &options, &control)
    })
}

/// Joins ZIPs of `renderJpeg` for consecutive page ranges of one document, in page order,
/// into the ZIP `renderJpeg` writes for all those pages (a page-parallel job's assembly).
/// Resolves to the bytes written.
#[napi(
    ts_args_type = "parts: string[], output: string, control?: JobControl | null",
    ts_return_type = "Promise<number>"
)]
pub fn render_join<'env>(
    env: &'env Env,
    parts: Vec<String>,
    output: String,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let control = control_of(control);
    spawn_job(env, move || {
        let parts: Vec<&Path> = parts.iter().map(Path::new).collect();
        render::join_page_zips(&parts, output.as_ref(), &control)
    })
}

/// The options of a redaction call, with the process's JPEG encoder.
fn redact_options(options: engine::Result<redact::RedactOptions>) -> engine::Result<redact::RedactOptions> {
    Ok(redact::RedactOptions { jpeg_encoder: settings().jpeg_encoder, ..options? })
}

/// Burns black regions into their pages (`engine::pagework::redact::RedactOptions`;
/// rasterised and rebuilt as image-only pages). `pages_processed` is the number of pages
/// rebuilt.
#[napi(
    ts_args_type = "input: string, output: string, options: RedactOptions, control?: JobControl | null",
    ts_return_type = "Promise<PageOpResult>"
)]
pub fn redact<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: Option<Unknown<'env>>,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let (options, control) = (options_from(env, options), control_of(control));
    spawn_job(env, move || redact::redact(input.as_ref(), output.as_ref(), &redact_options(options)?, &control))
}

/// Burns the pages of `options.regions` (some of a redaction's pages) into `output`, for
/// `redactAssemble` on another process (a page-parallel job's task). Resolves to the pages
/// burnt.
#[napi(
    ts_args_type = "input: string, output: string, options: RedactOptions, control?: JobControl | null",
    ts_return_type = "Promise<number>"
)]
pub fn redact_burn<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: Option<Unknown<'env>>,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let (options, control) = (options_from(env, options), control_of(control));
    spawn_job(env, move || redact::redact_burn(input.as_ref(), output.as_ref(), &redact_options(options)?, &control))
}

/// `redact` with its pages burnt by `redactBurn` into `parts` (together every page with a
/// region): the output `redact` writes.
#[napi(
    ts_args_type = "input: string, output: string, options: RedactOptions, parts: string[], control?: JobControl | null",
    ts_return_type = "Promise<PageOpResult>"
)]
pub fn redact_assemble<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: Option<Unknown<'env>>,
    parts: Vec<String>,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let (options, control) = (options_from(env, options), control_of(control));
    spawn_job(env, move || {
        let parts: Vec<&Path> = parts.iter().map(Path::new).collect();
        redact::redact_assemble(input.as_ref(), output.as_ref(), &redact_options(options)?, &parts, &control)
    })
}

/// Compresses a PDF (`engine::pagework::compress::CompressOptions`: light = lossless;
/// balanced, strong = images downsampled and re-encoded). Never larger than the input.
#[napi(
    ts_args_type = "input: string, output: string, options: CompressOptions, control?: JobControl | null",
    ts_return_type = "Promise<CompressResult>"
)]
pub fn compress<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: Option<Unknown<'env>>,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let (options, control) = (options_from::<compress::CompressOptions>(env, options), control_of(control));
    spawn_job(env, move || {
        let s = settings();
        let options = compress::CompressOptions {
            subset_fonts: s.compress_subset_fonts,
            guard_always: s.compress_guard_always,
            images: s.compress_images.unwrap_or(compress::ImagePass::Engine),
            ..options?
        };
        compress::compress(input.as_ref(), output.as_ref(), &options, &control)
    })
}
