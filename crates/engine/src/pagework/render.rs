//! PDF pages to JPEG: MuPDF rasterises each page at `dpi`, `jpeg-encoder` (pure Rust,
//! AVX2 when the CPU has it) encodes it. One page gives a `.jpg`; several give a ZIP of
//! `page-NNNN.jpg` (NNNN = the 1-based page number in the input), stored uncompressed.
//!
//! # Threads and memory
//!
//! Pages are handed out in order to a few render threads (`threads`, default the number
//! of cores, at most [`MAX_RENDER_THREADS`]); each thread opens the document itself in
//! a MuPDF context of its own (`src/pdf/private_doc.rs`: the mupdf crate's per-thread
//! contexts share locks, store and glyph cache, which cost two threads ~15% in waits)
//! and renders one page at a time. The
//! encoded pages go through a bounded channel to the calling thread, which writes them
//! in page order; so at most about `2 x threads` pages (raster or JPEG) are in memory,
//! however long the document is.
//!
//! # Limits
//!
//! - A page whose raster would exceed [`MAX_PAGE_PIXELS`] (100 megapixels, e.g. a
//!   70 x 70 inch page at 150 dpi, or 300 MB of RGB) or 65535 pixels on a side (the JPEG
//!   limit) fails the job with `page_too_large` before anything is rendered.
//! - Each page's content streams are decoded once with the engine's 256 MiB cap before
//!   rendering (`pdf/content.rs`), so a decompression bomb is `invalid_pdf` instead of
//!   filling memory inside MuPDF.
//!
//! # JPEG choices (measured, see docs/render.md)
//!
//! Baseline (not progressive) with optimised Huffman tables off and 4:2:0 chroma
//! subsampling for colour pages: progressive encoding costs about 2x the encode time
//! for a few percent smaller files. A page whose raster is pure grey (R = G = B for every
//! pixel, checked on the raster: about 1 ms per 150-dpi page) is written as a
//! one-channel greyscale JPEG, a third smaller and faster to encode.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use jpeg_encoder::{ColorType, Encoder, PixelDensity, SamplingFactor};
use mupdf::{Colorspace, Document, Matrix};
use serde::{Deserialize, Serialize};

use crate::pdf::private_doc::PrivateDoc;

use crate::control::JobControl;
use crate::error::{EngineError, ErrorCode, MuPdfResultExt, Result};
use crate::pdf::content::repair_page_contents;
use crate::pdf::mcid::untag_costly_pages;
use crate::pdf::open::{open_pdf, path_str, PasswordPolicy, Source};
use crate::pdf::pages::selected_or_all;
use crate::pdf::save::write_atomically;

/// Default resolution in dots per inch.
pub const DEFAULT_DPI: u32 = 150;
/// Smallest accepted `dpi`.
pub const MIN_DPI: u32 = 36;
/// Largest accepted `dpi`.
pub const MAX_DPI: u32 = 600;
/// Default JPEG quality (1-100).
pub const DEFAULT_QUALITY: u8 = 85;
/// Largest raster of one page, in pixels (width x height).
pub const MAX_PAGE_PIXELS: u64 = 100_000_000;
/// Largest side of a page raster (a JPEG stores sizes as 16-bit integers).
pub const MAX_PAGE_SIDE: u64 = 65_535;
/// Upper bound on render threads per job.
pub const MAX_RENDER_THREADS: usize = 8;

/// Options of [`render_jpeg`].
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RenderOptions {
    /// Dots per inch, [`MIN_DPI`]..=[`MAX_DPI`]; default [`DEFAULT_DPI`].
    pub dpi: Option<u32>,
    /// JPEG quality 1..=100; default [`DEFAULT_QUALITY`].
    pub quality: Option<u8>,
    /// 0-based page indexes; default every page. Rendered in ascending page order,
    /// duplicates ignored.
    pub pages: Option<Vec<i64>>,
    /// Render threads; default the number of cores, capped at [`MAX_RENDER_THREADS`].
    pub threads: Option<usize>,
    /// Refuse inputs with more pages than this (`page_limit`).
    pub max_pages: Option<u32>,
    /// Which JPEG encoder writes the pages; default [`JpegEncoder::Auto`]. A setting of the
    /// process, not an option of a call: never deserialized.
    #[serde(skip)]
    pub jpeg_encoder: JpegEncoder,
}

/// The JPEG encoder of rendered (and redacted) pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JpegEncoder {
    /// The system's libjpeg-turbo when it is installed ([`turbo`]), else jpeg-encoder.
    #[default]
    Auto,
    /// jpeg-encoder (pure Rust) always: for comparisons.
    Rust,
}

impl JpegEncoder {
    /// Parses `auto` (also `turbo`) or `rust`.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "auto" | "turbo" => Ok(Self::Auto),
            "rust" => Ok(Self::Rust),
            other => Err(EngineError::invalid_options(format!("jpeg encoder must be auto or rust, not {other:?}"))),
        }
    }
}

/// What [`render_jpeg`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RenderResult {
    /// Pages rendered.
    pub pages_processed: u32,
    /// Pages in the input document.
    pub page_count: u32,
    /// True when the output is a ZIP of JPEGs, false for a single JPEG.
    pub zip: bool,
    /// Pages written as greyscale JPEGs.
    pub grey_pages: u32,
    /// Size of the output file.
    pub output_bytes: u64,
}

/// One rendered page, ready to write.
pub struct EncodedPage {
    /// The JPEG file.
    pub jpeg: Vec<u8>,
    /// Written as one-channel greyscale.
    pub grey: bool,
}

/// The pixel size of a page at `dpi`, or `page_too_large`.
pub(crate) fn raster_size(bounds: mupdf::Rect, dpi: u32, page_no: usize) -> Result<(u32, u32)> {
    let scale = dpi as f64 / 72.0;
    let w = ((bounds.x1 - bounds.x0) as f64 * scale).ceil().max(1.0);
    let h = ((bounds.y1 - bounds.y0) as f64 * scale).ceil().max(1.0);
    if !w.is_finite() || !h.is_finite() {
        return Err(EngineError::new(ErrorCode::InvalidPdf, format!("page {page_no} has an invalid size")));
    }
    let (wu, hu) = (w as u64, h as u64);
    if wu > MAX_PAGE_SIDE || hu > MAX_PAGE_SIDE || wu.saturating_mul(hu) > MAX_PAGE_PIXELS {
        return Err(EngineError::new(
            ErrorCode::PageTooLarge,
            format!(
                "page {page_no} would render at {wu} x {hu} pixels at {dpi} dpi, more than the cap of \
                 {} megapixels (or {MAX_PAGE_SIDE} pixels a side); lower the dpi",
                MAX_PAGE_PIXELS / 1_000_000
            ),
        ));
    }
    Ok((wu as u32, hu as u32))
}

/// Renders page `index` (0-based) of `doc` to an RGB raster at `dpi` with annotations
/// and form widgets; returns (width, height, tightly packed RGB bytes). Public for
/// the per-page benchmark (examples/pagework.rs).
pub fn render_rgb(doc: &Document, index: usize, dpi: u32) -> Result<(u32, u32, Vec<u8>)> {
    let page = doc.load_page(index as i32).ctx("loading the page")?;
    let bounds = page.bounds().ctx("measuring the page")?;
    raster_size(bounds, dpi, index + 1)?;
    let scale = dpi as f32 / 72.0;
    let ctm = Matrix::new_scale(scale, scale);
    let pix = page.to_pixmap(&ctm, &Colorspace::device_rgb(), false, true).ctx("rendering the page")?;
    let (w, h) = (pix.width(), pix.height());
    Ok((w, h, packed_rgb(w, h, pix.n() as usize, pix.stride() as usize, pix.samples()).into_owned()))
}

/// The first three samples of each pixel, rows without padding: the samples themselves
/// when they are already packed RGB.
fn packed_rgb(w: u32, h: u32, n: usize, stride: usize, samples: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let row = w as usize * 3;
    if n == 3 && stride == row {
        return std::borrow::Cow::Borrowed(&samples[..row * h as usize]);
    }
    let mut out = Vec::with_capacity(row * h as usize);
    for y in 0..h as usize {
        let line = &samples[y * stride..y * stride + w as usize * n];
        for px in line.chunks_exact(n) {
            out.extend_from_slice(&px[..3]);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// True when every pixel has R = G = B.
fn is_grey(rgb: &[u8]) -> bool {
    rgb.chunks_exact(3).all(|p| p[0] == p[1] && p[1] == p[2])
}

/// Encodes an RGB raster as JPEG (greyscale when the raster is grey).
pub fn encode_jpeg(w: u32, h: u32, rgb: &[u8], quality: u8, dpi: u32, encoder: JpegEncoder) -> Result<EncodedPage> {
    let grey = is_grey(rgb);
    #[cfg(not(engine_turbo))]
    let _ = encoder;
    #[cfg(engine_turbo)]
    if encoder == JpegEncoder::Auto && turbo::available() {
        let luma: Vec<u8>;
        let (px, comps) = if grey {
            luma = rgb.chunks_exact(3).map(|p| p[0]).collect();
            (&luma[..], 1)
        } else {
            (rgb, 3)
        };
        let jpeg = turbo::encode(px, w, h, comps, quality, dpi)?;
        return Ok(EncodedPage { jpeg, grey });
    }
    let mut jpeg = Vec::with_capacity(rgb.len() / 10);
    let mut enc = Encoder::new(&mut jpeg, quality);
    enc.set_density(PixelDensity::dpi(dpi.min(u16::MAX as u32) as u16));
    enc.set_sampling_factor(SamplingFactor::F_2_2);
    let failed =
        |e: jpeg_encoder::EncodingError| EngineError::new(ErrorCode::EngineError, format!("encoding the JPEG: {e}"));
    if grey {
        let luma: Vec<u8> = rgb.chunks_exact(3).map(|p| p[0]).collect();
        enc.encode(&luma, w as u16, h as u16, ColorType::Luma).map_err(failed)?;
    } else {
        enc.encode(rgb, w as u16, h as u16, ColorType::Rgb).map_err(failed)?;
    }
    Ok(EncodedPage { jpeg, grey })
}

/// The system's libjpeg-turbo (SIMD), loaded at run time by csrc/turbo.c; about 3x
/// faster than jpeg-encoder on 150-dpi pages (measured, docs/render.md). Used when the
/// library is installed, unless [`JpegEncoder::Rust`] is asked for.
#[cfg(engine_turbo)]
pub mod turbo {
    use std::ffi::c_int;
    use std::sync::OnceLock;

    use crate::error::{EngineError, ErrorCode, Result};

    extern "C" {
        fn engine_turbo_available() -> c_int;
    }

    /// True when libjpeg-turbo was found.
    pub fn available() -> bool {
        static ON: OnceLock<bool> = OnceLock::new();
        *ON.get_or_init(|| unsafe { engine_turbo_available() } != 0)
    }

    /// Encodes `comps` (1 or 3) interleaved 8-bit samples: baseline with the standard
    /// Huffman tables (no extra pass; speed first for page renders), 4:2:0 for colour.
    pub fn encode(px: &[u8], w: u32, h: u32, comps: u32, quality: u8, dpi: u32) -> Result<Vec<u8>> {
        crate::pagework::compress::jpeg::encode(px, w, h, comps, quality as u32, dpi, 0)
            .map_err(|m| EngineError::new(ErrorCode::EngineError, format!("encoding the JPEG: {m}")))
    }
}

fn render_page(doc: &Document, index: usize, dpi: u32, quality: u8, encoder: JpegEncoder) -> Result<EncodedPage> {
    render_page_timed(doc, index, dpi, quality, encoder).map(|(page, _)| page)
}

/// Renders page `index` of `doc` and encodes it (the path of [`render_jpeg`]); returns
/// the page and the time spent rasterising (the rest is the grey check and encoding).
/// The encoder reads MuPDF's pixmap in place when it is packed RGB (no copy).
pub fn render_page_timed(
    doc: &Document,
    index: usize,
    dpi: u32,
    quality: u8,
    encoder: JpegEncoder,
) -> Result<(EncodedPage, std::time::Duration)> {
    let t = std::time::Instant::now();
    let page = doc.load_page(index as i32).ctx("loading the page")?;
    let bounds = page.bounds().ctx("measuring the page")?;
    raster_size(bounds, dpi, index + 1)?;
    let scale = dpi as f32 / 72.0;
    let pix = page
        .to_pixmap(&Matrix::new_scale(scale, scale), &Colorspace::device_rgb(), false, true)
        .ctx("rendering the page")?;
    let raster = t.elapsed();
    let (w, h) = (pix.width(), pix.height());
    let rgb = packed_rgb(w, h, pix.n() as usize, pix.stride() as usize, pix.samples());
    Ok((encode_jpeg(w, h, &rgb, quality, dpi, encoder)?, raster))
}

/// [`render_page`] on a render thread's own document.
fn render_private_page(
    doc: &PrivateDoc,
    index: usize,
    dpi: u32,
    quality: u8,
    encoder: JpegEncoder,
) -> Result<EncodedPage> {
    let r = doc.render(index, dpi)?;
    let rgb = packed_rgb(r.width, r.height, r.n, r.stride, r.samples());
    encode_jpeg(r.width, r.height, &rgb, quality, dpi, encoder)
}

/// Checks `dpi` against [`MIN_DPI`]..=[`MAX_DPI`] (or custom bounds).
pub(crate) fn checked_dpi(dpi: Option<u32>, default: u32, min: u32, max: u32) -> Result<u32> {
    let dpi = dpi.unwrap_or(default);
    if dpi < min || dpi > max {
        return Err(EngineError::invalid_options(format!("dpi must be between {min} and {max}, not {dpi}")));
    }
    Ok(dpi)
}

/// Renders the selected pages of the PDF at `input` to JPEG. One page: `output` is a
/// JPEG file; several: a ZIP (stored entries) of `page-NNNN.jpg`.
pub fn render_jpeg(input: &Path, output: &Path, options: &RenderOptions, control: &JobControl) -> Result<RenderResult> {
    let dpi = checked_dpi(options.dpi, DEFAULT_DPI, MIN_DPI, MAX_DPI)?;
    let quality = options.quality.unwrap_or(DEFAULT_QUALITY);
    if !(1..=100).contains(&quality) {
        return Err(EngineError::invalid_options(format!("quality must be between 1 and 100, not {quality}")));
    }
    control.checkpoint()?;
    let opened = open_pdf(Source::Path(input), PasswordPolicy::Refuse, options.max_pages)?;
    // Only read: pages MuPDF would take hours to run stay untagged.
    drop(untag_costly_pages(&opened.doc));
    let page_count = opened.page_count();
    let selected: Vec<usize> = selected_or_all(options.pages.as_deref(), page_count)?.into_iter().collect();
    // Reject oversized pages and decompression bombs before any thread starts.
    for &i in &selected {
        let page = opened.doc.load_page(i as i32).ctx("loading the page")?;
        raster_size(page.bounds().ctx("measuring the page")?, dpi, i + 1)?;
    }
    let scratch = JobControl::new();
    repair_page_contents(selected.iter().map(|&i| (i + 1, &opened.pages[i])), &scratch)?;
    control.start(selected.len() as u64)?;

    // One page or one thread: render on this thread with the document already open
    // (no second parse). Otherwise each render thread opens the file itself; a fresh
    // open sees the same pages unless the page tree had to be rebuilt from a scan, and
    // then this thread renders with the repaired document.
    let wanted = options
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .clamp(1, MAX_RENDER_THREADS)
        .min(selected.len());
    let threads = if wanted <= 1 {
        0
    } else {
        let fresh_count = Document::open(path_str(input)?).and_then(|d| d.page_count()).unwrap_or(-1);
        if fresh_count == page_count as i32 {
            wanted
        } else {
            0
        }
    };
    let zip = selected.len() > 1;
    let mut grey_pages = 0u32;
    let output_bytes = write_atomically(output, control, |tmp| {
        let file = File::create(tmp).map_err(|e| EngineError::io("creating the output", e))?;
        let mut sink = PageSink::new(BufWriter::new(file), zip);
        let mut write = |index: usize, page: EncodedPage| -> Result<()> {
            grey_pages += page.grey as u32;
            sink.add(index, &page.jpeg)?;
            control.advance()
        };
        if threads == 0 {
            for &i in &selected {
                control.checkpoint()?;
                let page = render_page(&opened.doc, i, dpi, quality, options.jpeg_encoder)?;
                write(i, page)?;
            }
        } else {
            render_parallel(input, &selected, (dpi, quality, options.jpeg_encoder), threads, control, &mut write)?;
        }
        sink.finish()
    })?;
    control.finish();
    Ok(RenderResult {
        pages_processed: selected.len() as u32,
        page_count: page_count as u32,
        zip,
        grey_pages,
        output_bytes,
    })
}

/// Renders `selected` on `threads` threads, calling `write` in page order.
fn render_parallel(
    input: &Path,
    selected: &[usize],
    (dpi, quality, encoder): (u32, u8, JpegEncoder),
    threads: usize,
    control: &JobControl,
    write: &mut dyn FnMut(usize, EncodedPage) -> Result<()>,
) -> Result<()> {
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::sync_channel::<(usize, Result<EncodedPage>)>(threads);
    std::thread::scope(|scope| {
        for t in 0..threads {
            let tx = tx.clone();
            let (next, stop) = (&next, &stop);
            std::thread::Builder::new()
                .name(format!("render-{t}"))
                .stack_size(16 << 20)
                .spawn_scoped(scope, move || {
                    let doc = match PrivateDoc::open(input, threads) {
                        Ok(d) => d,
                        Err(e) => {
                            let _ = tx.send((0, Err(e)));
                            return;
                        }
                    };
                    loop {
                        let k = next.fetch_add(1, Ordering::SeqCst);
                        if k >= selected.len() || stop.load(Ordering::SeqCst) || control.is_cancelled() {
                            return;
                        }
                        let page = render_private_page(&doc, selected[k], dpi, quality, encoder);
                        if tx.send((k, page)).is_err() {
                            return;
                        }
                    }
                })
                .expect("spawning a render thread");
        }
        drop(tx);
        // Reorder buffer: at most `threads` pages ahead of the next one to write, since
        // threads take pages in order and block on the bounded channel.
        let mut pending: BTreeMap<usize, EncodedPage> = BTreeMap::new();
        let mut expected = 0usize;
        let result = (|| -> Result<()> {
            for (k, page) in rx.iter() {
                pending.insert(k, page?);
                while let Some(page) = pending.remove(&expected) {
                    write(selected[expected], page)?;
                    expected += 1;
                }
            }
            control.checkpoint()?;
            if expected != selected.len() {
                return Err(EngineError::new(
                    ErrorCode::EngineError,
                    "a render thread stopped before its pages were done",
                ));
            }
            Ok(())
        })();
        if result.is_err() {
            stop.store(true, Ordering::SeqCst);
            // Drain so that blocked senders can finish.
            for _ in rx.iter() {}
        }
        result
    })
}

/// Joins ZIPs written by [`render_jpeg`] for consecutive page ranges of one document (in
/// page order) into the ZIP it writes for all their pages at once: the entries are copied as
/// they are, in order. A page-parallel job's tasks render the ranges on different processes.
/// Returns the bytes written.
pub fn join_page_zips(parts: &[&Path], output: &Path, control: &JobControl) -> Result<u64> {
    let zip_failed = |e: zip::result::ZipError| EngineError::new(ErrorCode::IoError, format!("joining the ZIPs: {e}"));
    let bytes = write_atomically(output, control, |tmp| {
        let file = File::create(tmp).map_err(|e| EngineError::io("creating the output", e))?;
        let mut out = zip::ZipWriter::new(BufWriter::new(file));
        for part in parts {
            control.checkpoint()?;
            let input = File::open(part).map_err(|e| EngineError::io("reading a part", e))?;
            let mut archive = zip::ZipArchive::new(std::io::BufReader::new(input)).map_err(zip_failed)?;
            for i in 0..archive.len() {
                out.raw_copy_file(archive.by_index_raw(i).map_err(zip_failed)?).map_err(zip_failed)?;
            }
        }
        let mut w = out.finish().map_err(zip_failed)?;
        w.flush().map_err(|e| EngineError::io("writing the output", e))
    })?;
    Ok(bytes)
}

/// Writes one JPEG, or a ZIP of stored JPEGs.
struct PageSink<W: Write + std::io::Seek> {
    zip: Option<zip::ZipWriter<W>>,
    plain: Option<W>,
}

impl<W: Write + std::io::Seek> PageSink<W> {
    fn new(out: W, zip: bool) -> Self {
        if zip {
            Self { zip: Some(zip::ZipWriter::new(out)), plain: None }
        } else {
            Self { zip: None, plain: Some(out) }
        }
    }

    fn add(&mut self, index: usize, jpeg: &[u8]) -> Result<()> {
        let io = |e: std::io::Error| EngineError::io("writing the output", e);
        if let Some(z) = &mut self.zip {
            let opts = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Stored)
                .large_file(false);
            z.start_file(format!("page-{:04}.jpg", index + 1), opts)
                .map_err(|e| EngineError::new(ErrorCode::IoError, format!("writing the ZIP: {e}")))?;
            z.write_all(jpeg).map_err(io)
        } else if let Some(w) = &mut self.plain {
            w.write_all(jpeg).map_err(io)
        } else {
            Ok(())
        }
    }

    fn finish(mut self) -> Result<()> {
        let io = |e: std::io::Error| EngineError::io("writing the output", e);
        if let Some(z) = self.zip.take() {
            let mut w =
                z.finish().map_err(|e| EngineError::new(ErrorCode::IoError, format!("writing the ZIP: {e}")))?;
            w.flush().map_err(io)?;
        }
        if let Some(mut w) = self.plain.take() {
            w.flush().map_err(io)?;
        }
        Ok(())
    }
}
