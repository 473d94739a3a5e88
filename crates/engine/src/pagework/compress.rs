//! Making PDFs smaller, at three levels:
//!
//! | level | images | structure |
//! |---|---|---|
//! | `light` | untouched (lossless) | unused objects removed, duplicate objects and streams merged (ICC profiles equal but for their header date and ID too), embedded fonts subset to the glyphs used (Type 1 programs converted to CFF), ToUnicode CMaps cut to the codes shown, XMP metadata deflated (not in PDF/A files; the lossy levels deflate theirs too), streams without a filter deflated and existing flate streams re-deflated at level 9 when smaller (a PNG predictor dropped when that is smaller; libdeflate, zlib-rs for images), objects packed into object streams |
//! | `balanced` | colour and grey images used above 225 dpi downsampled (area average) to 150 dpi (a JPEG to the DCT scale within 5% under that size, when there is one); JPEG images re-encoded JPEG q65 (q70 when kept at their size), losslessly stored images stay lossless (flate) unless JPEG q65 is 10% smaller at SSIM >= 0.95; bitonal images above 450 dpi to 300 dpi (area majority), 1-bit, CCITT G4 or flate | as light, and what no viewer shows dropped: page thumbnails, PieceInfo, XMP metadata of anything but the document, the document XMP's thumbnail |
//! | `strong` | every colour and grey image used above 108 dpi downsampled to 72 dpi, JPEG q50 or flate, the smaller (like Ghostscript's /screen); bitonal above 300 dpi to 200 dpi | as balanced |
//!
//! Every lossy level does all that light does, so it is not larger than light for want
//! of a lossless step (the levels' order, strong <= balanced <= light, is tested over
//! corpus files in tests/compress_text.rs).
//!
//! Font subsetting is MuPDF's `pdf_subset_fonts` (TrueType, OpenType and CID-keyed CFF
//! programs, fonts of annotations included); bare Type 1 programs (`/FontFile`, what
//! LaTeX embeds) are converted to CFF subsets of the glyphs used by the engine
//! (`src/pagework/compress/fonts.rs`), and simple fonts' whole CFF programs (`/FontFile3
//! /Type1C`, which `pdf_subset_fonts` leaves) are cut by MuPDF's CFF subsetter
//! (`csrc/compress_fonts.c`). A font that cannot be parsed is left as it is;
//! encrypted documents are not subset. After subsetting the content guard (below) compares every page's words, and
//! a loss redoes the run without subsetting. [`CompressOptions::subset_fonts`] turns it
//! off (for comparisons).
//!
//! At every level, a page whose content was damaged (cut short, or re-serialised after a
//! syntax error) keeps only the resources its remaining content names
//! (`src/pdf/resources.rs`).
//!
//! The lossy levels also drop the document's `/OutputIntents` (the print-condition ICC
//! profile of PDF/X and PDF/A files, often hundreds of KB), as Ghostscript does.
//!
//! The effective dpi of an image is measured from its largest use on a page. Bitonal
//! (1-bit, and 8-bit grey that is only black and white) images stay 1-bit, never JPEG.
//! A re-encoded image replaces the original only when it is smaller. An image too large
//! to decode (over 512 MiB at 8 bits per sample) is kept as stored. Text, vectors, fonts, forms, links, outlines and encryption
//! (owner-password-only files stay encrypted with the same permissions) are kept.
//!
//! The result is never larger than the input: when the output is not smaller, the
//! input bytes are copied and [`CompressResult::kept_original`] is set.
//!
//! How (lossy levels): first the engine's own image pass (`src/pagework/compress/images.rs`):
//! the grey and colour 8-bit images stored as DCT (JPEG) or flate, and bitonal ones, are decoded,
//! downsampled and re-encoded on worker threads (one per core, up to 8): JPEGs decoded
//! by the system's libjpeg-turbo scaled in the DCT domain (1/2, 1/4, 1/8), the rest of
//! the ratio an area average, output progressive JPEG (libjpeg-turbo) or flate
//! (zlib-rs). Then MuPDF's `pdf_rewrite_images` for the images
//! the pass does not take (indexed colour, CMYK, 16-bit, JPX, filter chains,
//! and JPEGs when libjpeg-turbo is missing), on a second opening of the file with the
//! pass's images hidden from it: it filters the page contents and rewrites their
//! resources, which damaged some files (pdf20-utf8-test.pdf lost its font resource, so
//! its text), so only its new image streams are copied back into the image objects
//! they replace; images that do not decode cleanly are kept as stored.
//! Then MuPDF's `pdf_save_document` (object streams, garbage collection). The MuPDF
//! calls go through `csrc/compress*.c` (the crate exposes neither): passes called in order
//! on one opened document, in a private MuPDF context on the calling thread
//! (`src/pagework/compress/ffi.rs`: Rust calls C, C never calls back). Cancellation is checked
//! between images; MuPDF's rewriter and the save cannot be interrupted.
//! [`ImagePass::Mupdf`] skips the pass (MuPDF's rewriter does every image: for
//! comparisons; [`ImagePass::MupdfInPlace`] also runs it on the document itself, the damage
//! the second opening prevents, to test the guard's fallbacks).
//!
//! After a run in which MuPDF's rewriter or font subsetter ran, a content guard
//! (`src/pagework/compress/guard.rs`) compares the output with its source: same page count, and
//! every word of each page's MuPDF text kept, in a font of the same name. On a loss the
//! run is redone without MuPDF's rewriter (the engine's pass only), then losslessly,
//! then the input is kept; [`CompressResult::path`] says which path made the output.

mod bitonal;
mod cff_std;
mod cff_write;
mod dct_image;
mod ffi;
mod flate_rows;
mod fonts;
mod g4;
mod guard;
mod images;
pub(crate) mod jpeg;
mod repack;
mod resample;
mod ssim;
mod t1_outline;
mod t2_write;
mod tounicode;
mod type1;

// csrc/compress_deflate.c calls libdeflate, which this crate builds and links.
use libdeflate_sys as _;

use std::ffi::{c_int, CStr};
use std::fs;
use std::path::Path;

use ffi::{Doc, ImageOptions, Pass};
use serde::{Deserialize, Serialize};

use crate::control::JobControl;
use crate::error::{EngineError, ErrorCode, Result};
use crate::pdf::content::repair_page_contents;
use crate::pdf::content_syntax::clean_damaged_contents;
use crate::pdf::open::{open_pdf, PasswordPolicy, Source};
use crate::pdf::pages::keep_encryption;
use crate::pdf::resources::drop_unnamed_resources;
use crate::pdf::save::{save_pdf, tmp_path, write_options};

/// Compression level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompressLevel {
    /// Lossless.
    Light,
    /// 150 dpi, JPEG q65 for JPEG images, lossless images stay lossless.
    #[default]
    Balanced,
    /// 72 dpi, JPEG q50.
    Strong,
}

impl CompressLevel {
    /// Parses `light`, `balanced` or `strong`.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "light" => Ok(Self::Light),
            "balanced" => Ok(Self::Balanced),
            "strong" => Ok(Self::Strong),
            other => {
                Err(EngineError::invalid_options(format!("level must be light, balanced or strong, not {other:?}")))
            }
        }
    }

    /// The image settings of this level, `None` for lossless.
    pub fn image_settings(self) -> Option<ImageSettings> {
        match self {
            Self::Light => None,
            Self::Balanced => Some(BALANCED),
            Self::Strong => Some(STRONG),
        }
    }
}

/// How a lossy level treats colour and grey images.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageSettings {
    /// Images used above this effective dpi are downsampled...
    pub threshold_dpi: u32,
    /// ...to this dpi.
    pub target_dpi: u32,
    /// JPEG quality of re-encoded images...
    pub jpeg_quality: u32,
    /// ...and of JPEG images re-encoded at their own size (no downsampling: a second
    /// generation of JPEG loss on top of the first).
    pub jpeg_quality_same_size: u32,
    /// Images stored losslessly (flate & co.) are downsampled but stay lossless (flate)
    /// unless JPEG is at least 10% smaller at SSIM >= 0.95 (flat, synthetic images
    /// deflate far smaller); false: they become JPEG.
    pub lossless_stays_lossless: bool,
    /// Bitonal (1-bit, or 8-bit black and white) images used above this dpi are
    /// downsampled by area majority...
    pub bitonal_threshold_dpi: u32,
    /// ...to this dpi, and stay 1-bit (CCITT G4 or flate).
    pub bitonal_target_dpi: u32,
}

/// `balanced`: like Ghostscript's /ebook (150 dpi), JPEG q65. q60 was smaller than /ebook
/// on every file but a little blurrier on two (SSIM at 100 dpi 0.9951 vs 0.9952 on
/// scanned-french-diacritics.pdf, 0.9983 vs 0.9984 on annotator-base64-image.pdf);
/// q65 is sharper than /ebook on every corpus file whose size the quality changes and
/// still smaller; q70 was larger than /ebook on two.
pub const BALANCED: ImageSettings = ImageSettings {
    threshold_dpi: 225,
    target_dpi: 150,
    jpeg_quality: 65,
    // scanned-huckfinn-page.pdf (a 150-dpi colour JPEG scan, not downsampled): SSIM
    // 0.977 at q60 (134 KB), 0.992 at q70 (155 KB); gs /ebook 0.982 (159 KB).
    jpeg_quality_same_size: 70,
    lossless_stays_lossless: true,
    bitonal_threshold_dpi: 450,
    bitonal_target_dpi: 300,
};
/// `strong`: like Ghostscript's /screen: above 108 dpi -> 72 dpi, JPEG q50 for every
/// colour and grey image.
pub const STRONG: ImageSettings = ImageSettings {
    threshold_dpi: 108,
    target_dpi: 72,
    jpeg_quality: 50,
    jpeg_quality_same_size: 50,
    lossless_stays_lossless: false,
    bitonal_threshold_dpi: 300,
    bitonal_target_dpi: 200,
};

/// Options of [`compress`]. The last three exist for comparisons and measurements; the
/// defaults are what the service runs. They are settings of the process, not options of a
/// call: never deserialized (absent fields take [`CompressOptions::default`]).
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CompressOptions {
    /// Level; default balanced.
    pub level: CompressLevel,
    /// Refuse inputs with more pages than this (`page_limit`).
    pub max_pages: Option<u32>,
    /// Subset embedded fonts; default true.
    #[serde(skip)]
    pub subset_fonts: bool,
    /// Run the content guard after every lossy run, not only after MuPDF's rewriter or
    /// subsetter; default false.
    #[serde(skip)]
    pub guard_always: bool,
    /// Who re-encodes the images; default [`ImagePass::Engine`].
    #[serde(skip)]
    pub images: ImagePass,
}

impl Default for CompressOptions {
    fn default() -> Self {
        Self {
            level: CompressLevel::default(),
            max_pages: None,
            subset_fonts: true,
            guard_always: false,
            images: ImagePass::Engine,
        }
    }
}

/// What [`compress`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CompressResult {
    /// Pages in the input (and the output).
    pub page_count: u32,
    /// Input size in bytes.
    pub input_bytes: u64,
    /// Output size in bytes (never more than `input_bytes`).
    pub output_bytes: u64,
    /// True when compression did not make the file smaller (or no path kept the
    /// content) and the input was copied.
    pub kept_original: bool,
    /// How the output was made (see [`CompressPath`]).
    pub path: CompressPath,
}

/// How [`compress`] made its output; serialized as [`CompressPath::as_str`] says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompressPath {
    /// The light level: lossless.
    Lossless,
    /// The level's images: the engine's image pass, MuPDF's rewriter for the rest.
    Images,
    /// MuPDF's rewriter damaged the file (lost text or pages, or failed): redone with
    /// the engine's image pass only; the images it does not take are kept as they are.
    OwnImagePassOnly,
    /// The lossy paths damaged the file or failed: redone losslessly (images kept).
    LosslessFallback,
}

impl CompressPath {
    /// `lossless`, `images`, `own_image_pass_only` or `lossless_fallback`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Lossless => "lossless",
            Self::Images => "images",
            Self::OwnImagePassOnly => "own_image_pass_only",
            Self::LosslessFallback => "lossless_fallback",
        }
    }

    /// True when a lossy level fell back to a safer path.
    pub fn fell_back(self) -> bool {
        matches!(self, Self::OwnImagePassOnly | Self::LosslessFallback)
    }
}

/// Compresses the PDF at `input` into `output` (written atomically).
pub fn compress(
    input: &Path,
    output: &Path,
    options: &CompressOptions,
    control: &JobControl,
) -> Result<CompressResult> {
    control.checkpoint()?;
    // The engine's own open: password policy, page limit, broken files and the
    // content-stream cap (decompression bombs) are handled as for every operation.
    let opened = open_pdf(Source::Path(input), PasswordPolicy::Refuse, options.max_pages)?;
    let page_count = opened.page_count();
    let scratch = JobControl::new();
    let truncated: Vec<usize> =
        repair_page_contents(opened.pages.iter().enumerate().map(|(i, p)| (i + 1, p)), &scratch)?
            .into_iter()
            .map(|n| n - 1)
            .collect();
    // Pages whose content syntax is broken, or that were cut short at damaged data, are
    // re-serialised as MuPDF parses them, so pdftotext & co. read the text MuPDF renders
    // instead of stopping at the damage; such pages keep only the resources their
    // remaining content names (a fuzzed file's fonts that no operator reaches any more
    // made the output five times Ghostscript's).
    let mut damaged = clean_damaged_contents(&opened.doc, &opened.pages, &truncated, &scratch)?;
    // The cut-short pages the filter could not rewrite are damaged too (each page once).
    let unfiltered: Vec<usize> = truncated.iter().copied().filter(|i| !damaged.contains(i)).collect();
    damaged.extend(unfiltered);
    for &index in &damaged {
        let mut page = opened.pages[index].clone();
        drop_unnamed_resources(&opened.doc, &mut page)?;
    }
    control.start(page_count as u64)?;
    // MuPDF's writer works on what it parses; a damaged file (broken page tree, bad
    // xref, truncated streams) is first saved as the engine repaired it, so the
    // compressor starts from a clean file. A file the open changed nothing in is
    // compressed as it is: the save cost 50 ms of geotopo-117-pages.pdf's 0.8 s at
    // balanced, and 10 of annotator-base64-image.pdf's 90 ms.
    if !opened.repaired && damaged.is_empty() && !opened.doc.has_unsaved_changes() {
        drop(opened);
        return compress_file(input, input, output, options, page_count, control);
    }
    let repaired = {
        let mut s = output.as_os_str().to_owned();
        s.push(".repaired");
        std::path::PathBuf::from(s)
    };
    save_pdf(&opened.doc, &repaired, write_options(keep_encryption(opened.encrypted)), &scratch)?;
    drop(opened);
    let result = compress_file(input, &repaired, output, options, page_count, control);
    let _ = fs::remove_file(&repaired);
    result
}

fn compress_file(
    input: &Path,
    source: &Path,
    output: &Path,
    options: &CompressOptions,
    page_count: usize,
    control: &JobControl,
) -> Result<CompressResult> {
    let input_bytes = fs::metadata(input).map_err(|e| EngineError::io("reading the input", e))?.len();
    let tmp = tmp_path(output);
    let cleanup = || {
        let _ = fs::remove_file(&tmp);
    };
    let (path, written) = match run_guarded(source, &tmp, options, page_count, control) {
        Ok(r) => r,
        Err(e) => {
            cleanup();
            return Err(e);
        }
    };
    if let Err(e) = control.checkpoint() {
        cleanup();
        return Err(e);
    }
    let kept_original = path.is_none() || written >= input_bytes;
    if kept_original {
        if let Err(e) = fs::copy(input, &tmp) {
            cleanup();
            return Err(EngineError::io("copying the input", e));
        }
    }
    if let Err(e) = fs::rename(&tmp, output) {
        cleanup();
        return Err(EngineError::io("moving the output in place", e));
    }
    control.finish();
    Ok(CompressResult {
        page_count: page_count as u32,
        input_bytes,
        output_bytes: if kept_original { input_bytes } else { written },
        kept_original,
        path: path.unwrap_or(CompressPath::Lossless),
    })
}

/// The choices of one run: the level's, less those a failed run took back.
#[derive(Debug, Clone, Copy)]
struct Plan {
    /// The level's image settings; `None` for a lossless run.
    images: Option<ImageSettings>,
    /// The engine's image pass runs (lossy runs with [`ImagePass::Engine`]).
    engine_pass: bool,
    /// MuPDF's rewriter runs for the images the engine's pass left (lossy runs).
    rewriter: bool,
    /// The rewriter runs on the document itself ([`ImagePass::MupdfInPlace`]).
    in_place: bool,
    /// Fonts subset (and Type 1 converted, CMaps cut).
    subset_fonts: bool,
    /// What no viewer shows is dropped: the level's choice, kept by a lossless fallback.
    drop_private: bool,
}

/// What one run's passes did, as far as they got: what decides the guard and the next path.
#[derive(Debug, Default, Clone, Copy)]
struct RunReport {
    /// MuPDF's rewriter ran (or failed).
    rewriter_ran: bool,
    /// The fonts pass may have changed fonts (MuPDF's subsetter ran through, or a font changed).
    fonts_changed: bool,
}

/// Writes `tmp` on the first path, in this order, whose output keeps every page (and,
/// after MuPDF's image rewriter or font subsetter, every word: [`guard`]): the level's
/// choices (the engine's image pass, MuPDF's rewriter for the rest, fonts subset), then
/// without font subsetting (when it ran), without MuPDF's rewriter (when it ran), lossless.
/// Each path is a fresh run on a new opening of the source: a failed run has changed its
/// document, and MuPDF keeps no copy of a document to go back to.
/// Returns the path and the bytes written; `None` when no path kept the content (the
/// caller copies the input).
fn run_guarded(
    source: &Path,
    tmp: &Path,
    options: &CompressOptions,
    page_count: usize,
    control: &JobControl,
) -> Result<(Option<CompressPath>, u64)> {
    let settings = options.level.image_settings();
    // Every level does what light does (so a lossy level is never larger than light for
    // want of it): streams re-deflated, fonts subset, duplicates merged, object streams.
    let mut plan = Plan {
        images: settings,
        engine_pass: options.images == ImagePass::Engine,
        rewriter: true,
        in_place: options.images == ImagePass::MupdfInPlace,
        subset_fonts: options.subset_fonts,
        // Thumbnails, PieceInfo and repeated metadata: not at light (lossless).
        drop_private: settings.is_some(),
    };
    // The source's words, read once, when some output needs checking: a lossy level's
    // images, subset fonts (nearly every file) or a forced guard. They are read on a
    // thread of their own while the first path runs (a second core was otherwise idle
    // for most of it); when nothing needs them the thread is left to finish unread.
    let likely = settings.is_some() || options.subset_fonts || options.guard_always;
    let mut reader = likely.then(|| {
        let source = source.to_path_buf();
        std::thread::spawn(move || guard::page_words(&source).unwrap_or_default())
    });
    let mut before = None;
    let mut path = if settings.is_some() { CompressPath::Images } else { CompressPath::Lossless };
    loop {
        let (report, result) = run_once(source, tmp, &plan, control)?;
        let failed = result.is_err();
        let failure = match result {
            // MuPDF's image rewriter gives up on some damaged image dictionaries.
            Err(message) => Some(format!("compressing: {message}")),
            Ok(pages) if pages != page_count => Some(format!("{pages} pages instead of {page_count}")),
            Ok(_) if report.rewriter_ran || report.fonts_changed || options.guard_always => {
                if before.is_none() {
                    // A source MuPDF's text extraction cannot open gives no pages to compare
                    // with: the output then counts as a loss and the safer paths are taken.
                    before = Some(match reader.take().map(|r| r.join()) {
                        Some(Ok(words)) => words,
                        _ => guard::page_words(source).unwrap_or_default(),
                    });
                }
                guard::lost_content(before.as_deref().unwrap_or_default(), tmp)
            }
            Ok(_) => None,
        };
        let Some(failure) = failure else {
            repack::repack_file(tmp, page_count);
            let written = fs::metadata(tmp).map(|m| m.len()).unwrap_or(u64::MAX);
            return Ok((Some(path), written));
        };
        control.checkpoint()?;
        // The next safer path: without font subsetting (when it ran), without MuPDF's
        // rewriter (when it ran), then lossless.
        if report.fonts_changed && plan.subset_fonts {
            plan.subset_fonts = false;
        } else if report.rewriter_ran && plan.rewriter && plan.engine_pass && plan.images.is_some() {
            plan.rewriter = false;
            path = CompressPath::OwnImagePassOnly;
        } else if plan.images.is_some() {
            plan.images = None;
            plan.rewriter = true;
            path = CompressPath::LosslessFallback;
        } else if failed {
            return Err(EngineError::new(ErrorCode::EngineError, failure));
        } else {
            // Even the lossless save lost content: the input is kept as it is.
            return Ok((None, 0));
        }
    }
}

/// Who re-encodes the images of a lossy level ([`CompressOptions::images`]; the last two
/// for comparisons).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImagePass {
    /// The engine's image pass, then MuPDF's rewriter (on a second opening) for the rest.
    Engine,
    /// MuPDF's rewriter for every image, without the engine's pass (on a second opening).
    Mupdf,
    /// As `Mupdf` with the rewriter on the document itself, content damage included (the
    /// guard's fallbacks are tested with it).
    MupdfInPlace,
}

impl ImagePass {
    /// Parses `engine`, `mupdf` or `mupdf-inplace`.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "engine" => Ok(Self::Engine),
            "mupdf" => Ok(Self::Mupdf),
            "mupdf-inplace" => Ok(Self::MupdfInPlace),
            other => Err(EngineError::invalid_options(format!(
                "image pass must be engine, mupdf or mupdf-inplace, not {other:?}"
            ))),
        }
    }
}

/// One run of the passes on one opening of `source`, the output saved to `tmp`: what
/// they did, and the page count of the document or the C side's message.
fn run_once(source: &Path, tmp: &Path, plan: &Plan, control: &JobControl) -> Result<(RunReport, Pass<usize>)> {
    let output = ffi::c_path(tmp)?;
    let mut doc = Doc::open(source)?;
    if let Some(settings) = plan.images.filter(|_| plan.engine_pass) {
        images::run(&mut doc, settings, control)?;
    }
    let mut report = RunReport::default();
    let result = run_passes(&mut doc, plan, &output, &mut report);
    Ok((report, result.map(|()| doc.page_count())))
}

/// The passes after the image pass, in their order (csrc/compress.c lists what each
/// changes), until one fails. `report` says what they did, a failed pass included.
fn run_passes(doc: &mut Doc, plan: &Plan, output: &CStr, report: &mut RunReport) -> Pass<()> {
    doc.reduce_functions()?;
    if let Some(s) = plan.images {
        let (r, done) = doc.other_images(&ImageOptions {
            threshold_dpi: s.threshold_dpi as c_int,
            target_dpi: s.target_dpi as c_int,
            jpeg_quality: s.jpeg_quality as c_int,
            lossless_stays_lossless: s.lossless_stays_lossless as c_int,
            rewriter: plan.rewriter as c_int,
            in_place: plan.in_place as c_int,
        });
        report.rewriter_ran = r.rewriter_ran != 0;
        done?;
    }
    doc.prune(plan.drop_private)?;
    if plan.subset_fonts {
        report.fonts_changed = fonts::run(doc)?.changed();
    }
    // PDF/A files' metadata stays unfiltered at light (PDF/A requires it).
    doc.streams(plan.drop_private)?;
    doc.save(output)?;
    Ok(())
}
