//! Addon exports of the engine's page work: `renderJpeg`, `redact`, `compress`.
//! Same conventions as the page operations (crate documentation: Promise, engine thread pool,
//! `code` on errors, `JobControl` for progress and cancellation).

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::runtime::{control_of, integer, integers, spawn_job, JobControl};
use crate::settings::settings;

fn small_integer(value: f64, what: &str, max: i64) -> engine::Result<i64> {
    let v = integer(value, what)?;
    if v < 0 || v > max {
        return Err(engine::EngineError::new(
            engine::ErrorCode::InvalidOptions,
            format!("{what} is out of range: {v}"),
        ));
    }
    Ok(v)
}

#[napi(object)]
pub struct RenderJpegOptions {
    /// Dots per inch, 36..=600; default 150.
    pub dpi: Option<f64>,
    /// JPEG quality 1..=100; default 85.
    pub quality: Option<f64>,
    /// 0-based page indexes; default every page.
    pub pages: Option<Vec<f64>>,
    /// Render threads for this job; default the number of cores (at most 8).
    pub threads: Option<f64>,
}

#[napi(object)]
pub struct RenderJpegResult {
    pub pages_processed: u32,
    pub page_count: u32,
    /// True: `output` is a ZIP of page-NNNN.jpg; false: a single JPEG.
    pub zip: bool,
    pub grey_pages: u32,
    pub output_bytes: f64,
}

/// Renders PDF pages to JPEG: one page -> a JPEG file, several -> a ZIP (stored) of
/// `page-NNNN.jpg` (1-based input page numbers).
#[napi(ts_return_type = "Promise<RenderJpegResult>")]
pub fn render_jpeg<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: RenderJpegOptions,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let control = control_of(control);
    spawn_job(env, move || {
        let options = engine::pagework::render::RenderOptions {
            dpi: options.dpi.map(|v| small_integer(v, "dpi", 100_000)).transpose()?.map(|v| v as u32),
            quality: options.quality.map(|v| small_integer(v, "quality", 255)).transpose()?.map(|v| v as u8),
            pages: options.pages.as_deref().map(|p| integers(p, "pages[]")).transpose()?,
            threads: options.threads.map(|v| small_integer(v, "threads", 64)).transpose()?.map(|v| v as usize),
            max_pages: None,
            jpeg_encoder: settings().jpeg_encoder,
        };
        engine::pagework::render::render_jpeg(input.as_ref(), output.as_ref(), &options, &control).map(|r| {
            RenderJpegResult {
                pages_processed: r.pages_processed,
                page_count: r.page_count,
                zip: r.zip,
                grey_pages: r.grey_pages,
                output_bytes: r.output_bytes as f64,
            }
        })
    })
}

/// Joins ZIPs of `renderJpeg` for consecutive page ranges of one document, in page order,
/// into the ZIP `renderJpeg` writes for all those pages (a page-parallel job's assembly).
/// Resolves to the bytes written.
#[napi(ts_return_type = "Promise<number>")]
pub fn render_join<'env>(
    env: &'env Env,
    parts: Vec<String>,
    output: String,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let control = control_of(control);
    spawn_job(env, move || {
        let parts: Vec<&std::path::Path> = parts.iter().map(std::path::Path::new).collect();
        engine::pagework::render::join_page_zips(&parts, output.as_ref(), &control).map(|b| b as f64)
    })
}

#[napi(object)]
pub struct RedactRegion {
    pub page: f64,
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

#[napi(object)]
pub struct RedactOptions {
    pub regions: Vec<RedactRegion>,
    /// 72..=600; default 150.
    pub dpi: Option<f64>,
}

/// Burns black regions into their pages (rasterised and rebuilt as image-only pages).
/// `pagesProcessed` is the number of pages rebuilt.
#[napi(ts_return_type = "Promise<PageOpResult>")]
pub fn redact<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: RedactOptions,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let control = control_of(control);
    spawn_job(env, move || {
        let options = redact_options(&options)?;
        engine::pagework::redact::redact(input.as_ref(), output.as_ref(), &options, &control)
            .map(crate::pdf::PageOpResult::from)
    })
}

fn redact_options(options: &RedactOptions) -> engine::Result<engine::pagework::redact::RedactOptions> {
    let regions = options
        .regions
        .iter()
        .map(|r| {
            Ok(engine::pagework::redact::RedactRegion {
                page: integer(r.page, "regions[].page")?,
                x: r.x,
                y: r.y,
                w: r.w,
                h: r.h,
            })
        })
        .collect::<engine::Result<Vec<_>>>()?;
    Ok(engine::pagework::redact::RedactOptions {
        regions,
        dpi: options.dpi.map(|v| small_integer(v, "dpi", 100_000)).transpose()?.map(|v| v as u32),
        max_pages: None,
        jpeg_encoder: settings().jpeg_encoder,
    })
}

/// Burns the pages of `options.regions` (some of a redaction's pages) into `output`, for
/// `redactAssemble` on another process (a page-parallel job's task). Resolves to the pages
/// burnt.
#[napi(ts_return_type = "Promise<number>")]
pub fn redact_burn<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: RedactOptions,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let control = control_of(control);
    spawn_job(env, move || {
        let options = redact_options(&options)?;
        engine::pagework::redact::redact_burn(input.as_ref(), output.as_ref(), &options, &control)
    })
}

/// `redact` with its pages burnt by `redactBurn` into `parts` (together every page with a
/// region): the output `redact` writes.
#[napi(ts_return_type = "Promise<PageOpResult>")]
pub fn redact_assemble<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: RedactOptions,
    parts: Vec<String>,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let control = control_of(control);
    spawn_job(env, move || {
        let options = redact_options(&options)?;
        let parts: Vec<&std::path::Path> = parts.iter().map(std::path::Path::new).collect();
        engine::pagework::redact::redact_assemble(input.as_ref(), output.as_ref(), &options, &parts, &control)
            .map(crate::pdf::PageOpResult::from)
    })
}

#[napi(object)]
pub struct CompressOptions {
    #[napi(ts_type = "'light' | 'balanced' | 'strong'")]
    pub level: Option<String>,
}

#[napi(object)]
pub struct CompressResult {
    pub page_count: u32,
    pub input_bytes: f64,
    pub output_bytes: f64,
    /// Compression did not make the file smaller: the output is a copy of the input.
    pub kept_original: bool,
    /// How the output was made: `lossless` (light), `images`, or after the content
    /// guard saw a loss, `own_image_pass_only` / `lossless_fallback`.
    pub path: String,
}

/// Compresses a PDF (light = lossless; balanced, strong = images downsampled and
/// re-encoded). Never larger than the input.
#[napi(ts_return_type = "Promise<CompressResult>")]
pub fn compress<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: CompressOptions,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let control = control_of(control);
    spawn_job(env, move || {
        let level = engine::pagework::compress::CompressLevel::parse(options.level.as_deref().unwrap_or("balanced"))?;
        let s = settings();
        let options = engine::pagework::compress::CompressOptions {
            level,
            max_pages: None,
            subset_fonts: s.compress_subset_fonts,
            guard_always: s.compress_guard_always,
            images: s.compress_images.unwrap_or(engine::pagework::compress::ImagePass::Engine),
        };
        engine::pagework::compress::compress(input.as_ref(), output.as_ref(), &options, &control).map(|r| {
            CompressResult {
                page_count: r.page_count,
                input_bytes: r.input_bytes as f64,
                output_bytes: r.output_bytes as f64,
                kept_original: r.kept_original,
                path: r.path.as_str().to_owned(),
            }
        })
    })
}
