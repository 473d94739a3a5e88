//! Redaction by burn-in: every page that has a region is rendered at `dpi` (with its
//! annotations and form widgets), the regions are painted opaque black on the raster,
//! and the page is rebuilt as a single JPEG image covering the page. Other pages are
//! copied untouched: their streams byte for byte, neither decoded nor recompressed
//! (except in a file MuPDF had to repair, where every page's content is checked and
//! repaired as in the other page operations).
//!
//! # Regions
//!
//! `{page, x, y, w, h}`: `page` is the 0-based page index; `x`, `y`, `w`, `h` are in PDF
//! points (1/72 inch) from the top-left corner of the page *as displayed* (after its
//! `/Rotate` and inside its CropBox), x to the right, y downwards, the same frame as the
//! page images of `convert` to jpg (pixel = point x dpi / 72). A region must lie on the
//! page (0 <= x, x + w <= displayed width, same for y; 0.01 pt of slack), else
//! `invalid_options`. Region edges are rounded outwards to whole pixels.
//!
//! # Page-parallel jobs
//!
//! The costly part, rendering and encoding the affected pages, can run on other processes:
//! [`redact_burn`] burns a subset of the pages into a file, and [`redact_assemble`] runs
//! [`redact`] with those pages read from such files instead of rendered. The rest is the same
//! code in the same order, so the output is the one [`redact`] writes.
//!
//! # What an affected page keeps
//!
//! Its MediaBox, CropBox and `/Rotate` (so it displays at the same size and
//! orientation) and nothing else of its content: the content streams and resources are
//! replaced by one image, its annotations are removed, its form fields are removed from
//! the AcroForm, and `/StructParents`, `/Group`, `/Thumb`, `/PieceInfo`, `/B` are
//! dropped. Its former content streams and annotations are deleted outright (unless
//! another page lists them too), and objects only they used are garbage-collected on
//! save. The whole document is written (never an incremental update, which would keep
//! the old page). The document's structure tree, outlines and named destinations are
//! kept as they are (a structure element's `/Alt` or `/ActualText` text is not
//! examined).

use std::collections::{BTreeMap, HashSet};
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use mupdf::pdf::{PdfDocument, PdfObject};
use mupdf::{Buffer, Colorspace, Document, Matrix};
use serde::Deserialize;

use crate::control::JobControl;
use crate::error::{EngineError, ErrorCode, MuPdfResultExt, Result};
use crate::pagework::render::{checked_dpi, encode_jpeg, raster_size, render_rgb, EncodedPage, JpegEncoder};
use crate::pdf::content::repair_page_contents;
use crate::pdf::mcid::untag_costly_pages;
use crate::pdf::open::{open_pdf, PasswordPolicy, Source};
use crate::pdf::pages::keep_encryption;
use crate::pdf::save::{patch_write_options, save_pdf};
use crate::pdf::PageOpResult;

/// Default rasterisation resolution of affected pages.
pub const REDACT_DEFAULT_DPI: u32 = 150;
/// Smallest accepted `dpi`.
pub const REDACT_MIN_DPI: u32 = 72;
/// Largest accepted `dpi`.
pub const REDACT_MAX_DPI: u32 = 600;
/// JPEG quality of rebuilt pages.
pub const REDACT_JPEG_QUALITY: u8 = 85;

/// One black box, see the module docs for the frame.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedactRegion {
    /// 0-based page index.
    pub page: i64,
    /// Points from the left edge of the displayed page.
    pub x: f64,
    /// Points from the top edge of the displayed page.
    pub y: f64,
    /// Width in points.
    pub w: f64,
    /// Height in points.
    pub h: f64,
}

/// Options of [`redact`].
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedactOptions {
    /// At least one region.
    pub regions: Vec<RedactRegion>,
    /// Resolution of the rebuilt pages; default [`REDACT_DEFAULT_DPI`].
    pub dpi: Option<u32>,
    /// Refuse inputs with more pages than this (`page_limit`).
    pub max_pages: Option<u32>,
    /// JPEG encoder of the rebuilt pages (as for render): a setting, never deserialized.
    #[serde(skip)]
    pub jpeg_encoder: JpegEncoder,
}

const SLACK: f64 = 0.01;

/// Burns the regions into their pages; `pages_processed` is the number of pages
/// rebuilt.
pub fn redact(input: &Path, output: &Path, options: &RedactOptions, control: &JobControl) -> Result<PageOpResult> {
    redact_pages(input, output, options, None, control)
}

/// [`redact`] with the affected pages burnt by [`redact_burn`] (into the files `parts`, which
/// together hold every page that has a region) instead of rendered here.
pub fn redact_assemble(
    input: &Path,
    output: &Path,
    options: &RedactOptions,
    parts: &[&Path],
    control: &JobControl,
) -> Result<PageOpResult> {
    let mut burnt = BTreeMap::new();
    for part in parts {
        read_burnt(part, &mut burnt)?;
    }
    redact_pages(input, output, options, Some(burnt), control)
}

/// Burns the pages of `options.regions` (a subset of a redaction's pages) into `output` for
/// [`redact_assemble`] on another process. Returns the number of pages burnt.
pub fn redact_burn(input: &Path, output: &Path, options: &RedactOptions, control: &JobControl) -> Result<u32> {
    let dpi = checked_dpi(options.dpi, REDACT_DEFAULT_DPI, REDACT_MIN_DPI, REDACT_MAX_DPI)?;
    control.checkpoint()?;
    let opened = open_pdf(Source::Path(input), PasswordPolicy::Refuse, options.max_pages)?;
    let untagged = untag_costly_pages(&opened.doc);
    let by_page = regions_by_page(&options.regions, opened.page_count())?;
    repair_page_contents(by_page.keys().map(|&i| (i + 1, &opened.pages[i])), &JobControl::new())?;
    control.start(by_page.len() as u64)?;
    let io = |e: std::io::Error| EngineError::io("writing the burnt pages", e);
    let file = std::fs::File::create(output).map_err(io)?;
    let mut w = BufWriter::new(file);
    for (&index, regions) in &by_page {
        control.checkpoint()?;
        let burnt = burn_in(&opened.doc, index, dpi, regions, options.jpeg_encoder)?;
        write_burnt(&mut w, index, &burnt).map_err(io)?;
        control.advance()?;
    }
    w.flush().map_err(io)?;
    untagged.restore();
    control.finish();
    Ok(by_page.len() as u32)
}

/// The regions by page, checked against the page count and for their sizes.
fn regions_by_page(regions: &[RedactRegion], page_count: usize) -> Result<BTreeMap<usize, Vec<RedactRegion>>> {
    if regions.is_empty() {
        return Err(EngineError::invalid_options("give at least one region"));
    }
    let mut by_page: BTreeMap<usize, Vec<RedactRegion>> = BTreeMap::new();
    for (i, r) in regions.iter().enumerate() {
        if r.page < 0 || r.page as usize >= page_count {
            return Err(EngineError::invalid_options(format!(
                "regions[{i}].page is {}, but the PDF has {page_count} pages",
                r.page
            )));
        }
        if ![r.x, r.y, r.w, r.h].iter().all(|v| v.is_finite()) || r.x < 0.0 || r.y < 0.0 || r.w <= 0.0 || r.h <= 0.0 {
            return Err(EngineError::invalid_options(format!("regions[{i}]: x and y must be >= 0 and w and h > 0")));
        }
        by_page.entry(r.page as usize).or_default().push(*r);
    }
    Ok(by_page)
}

/// Marks the start of a file of burnt pages (and its layout's version).
const BURNT_MAGIC: &[u8; 8] = b"DPBURNT1";

/// One burnt page: index (u64), bounds (4 x f32), raster size (2 x u32), grey (u8), JPEG
/// length (u64) and bytes, little-endian: the exact values, floats included.
fn write_burnt(w: &mut impl Write, index: usize, page: &BurntPage) -> std::io::Result<()> {
    w.write_all(BURNT_MAGIC)?;
    w.write_all(&(index as u64).to_le_bytes())?;
    for v in [page.bounds.x0, page.bounds.y0, page.bounds.x1, page.bounds.y1] {
        w.write_all(&v.to_le_bytes())?;
    }
    w.write_all(&page.w.to_le_bytes())?;
    w.write_all(&page.h.to_le_bytes())?;
    w.write_all(&[page.jpeg.grey as u8])?;
    w.write_all(&(page.jpeg.jpeg.len() as u64).to_le_bytes())?;
    w.write_all(&page.jpeg.jpeg)
}

fn read_burnt(path: &Path, into: &mut BTreeMap<usize, BurntPage>) -> Result<()> {
    let bad = |what: &str| EngineError::new(ErrorCode::IoError, format!("reading the burnt pages: {what}"));
    let file = std::fs::File::open(path).map_err(|e| EngineError::io("reading the burnt pages", e))?;
    let mut r = BufReader::new(file);
    let mut magic = [0u8; 8];
    loop {
        match r.read_exact(&mut magic) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(EngineError::io("reading the burnt pages", e)),
        }
        if &magic != BURNT_MAGIC {
            return Err(bad("not a file of burnt pages"));
        }
        let mut b8 = [0u8; 8];
        let mut b4 = [0u8; 4];
        let mut u64_ = |r: &mut BufReader<std::fs::File>| -> Result<u64> {
            r.read_exact(&mut b8).map_err(|_| bad("truncated"))?;
            Ok(u64::from_le_bytes(b8))
        };
        let index = u64_(&mut r)? as usize;
        let mut f = [0f32; 4];
        for v in &mut f {
            r.read_exact(&mut b4).map_err(|_| bad("truncated"))?;
            *v = f32::from_le_bytes(b4);
        }
        r.read_exact(&mut b4).map_err(|_| bad("truncated"))?;
        let w = u32::from_le_bytes(b4);
        r.read_exact(&mut b4).map_err(|_| bad("truncated"))?;
        let h = u32::from_le_bytes(b4);
        let mut grey = [0u8; 1];
        r.read_exact(&mut grey).map_err(|_| bad("truncated"))?;
        let len = u64_(&mut r)?;
        if len > (w as u64) * (h as u64) * 3 + (1 << 20) {
            return Err(bad("a JPEG larger than its raster"));
        }
        let mut jpeg = vec![0u8; len as usize];
        r.read_exact(&mut jpeg).map_err(|_| bad("truncated"))?;
        let bounds = mupdf::Rect { x0: f[0], y0: f[1], x1: f[2], y1: f[3] };
        into.insert(index, BurntPage { bounds, w, h, jpeg: EncodedPage { jpeg, grey: grey[0] != 0 } });
    }
}

fn redact_pages(
    input: &Path,
    output: &Path,
    options: &RedactOptions,
    mut burnt_pages: Option<BTreeMap<usize, BurntPage>>,
    control: &JobControl,
) -> Result<PageOpResult> {
    let dpi = checked_dpi(options.dpi, REDACT_DEFAULT_DPI, REDACT_MIN_DPI, REDACT_MAX_DPI)?;
    if options.regions.is_empty() {
        return Err(EngineError::invalid_options("give at least one region"));
    }
    control.checkpoint()?;
    let mut opened = open_pdf(Source::Path(input), PasswordPolicy::Refuse, options.max_pages)?;
    // Pages MuPDF would take hours to run are read as untagged, and saved as they were.
    let untagged = untag_costly_pages(&opened.doc);
    let page_count = opened.page_count();
    let by_page = regions_by_page(&options.regions, page_count)?;

    // Only the redacted pages are decoded (a decompression bomb there is refused before
    // rendering). Every other page is copied untouched, its streams byte for byte and
    // never decoded, so a bomb there stays inert. In a file MuPDF had to repair,
    // damaged content streams are likely on other pages too, and copying them would
    // give an output that fails `qpdf --check`: then every page is checked and
    // repaired, as the other page operations do.
    let scratch = JobControl::new();
    if opened.repaired {
        repair_page_contents(opened.pages.iter().enumerate().map(|(i, p)| (i + 1, p)), &scratch)?;
    } else {
        repair_page_contents(by_page.keys().map(|&i| (i + 1, &opened.pages[i])), &scratch)?;
    }
    control.start(by_page.len() as u64)?;

    let mut replaced = HashSet::new();
    for (&index, regions) in &by_page {
        control.checkpoint()?;
        let burnt = match burnt_pages.as_mut() {
            Some(pages) => pages
                .remove(&index)
                .ok_or_else(|| EngineError::new(ErrorCode::IoError, format!("page {index} was not burnt")))?,
            None => burn_in(&opened.doc, index, dpi, regions, options.jpeg_encoder)?,
        };
        let page_obj = opened.pages[index].clone();
        replaced.extend(rebuild_page(&mut opened.doc, page_obj, &burnt)?);
        control.advance()?;
    }
    delete_unshared(&mut opened.doc, &opened.pages, &by_page, replaced)?;

    // Without recompression untouched streams are written as they are; a repaired
    // file has repaired (decoded) content streams, which are deflated.
    untagged.restore();
    let options = patch_write_options(keep_encryption(opened.encrypted), opened.repaired);
    let output_bytes = save_pdf(&opened.doc, output, options, control)?;
    control.finish();
    Ok(PageOpResult { pages_processed: by_page.len() as u32, page_count: page_count as u32, output_bytes })
}

/// A page rendered with its regions painted black.
struct BurntPage {
    /// The displayed page box, in points.
    bounds: mupdf::Rect,
    /// Raster size in pixels.
    w: u32,
    h: u32,
    jpeg: EncodedPage,
}

/// Renders page `index` at `dpi`, paints the regions black and encodes the JPEG. Paints in MuPDF's pixmap when it is packed RGB
/// (no copy of the raster), as rendering does.
fn burn_in(
    doc: &Document,
    index: usize,
    dpi: u32,
    regions: &[RedactRegion],
    encoder: JpegEncoder,
) -> Result<BurntPage> {
    let page = doc.load_page(index as i32).ctx("loading the page")?;
    let bounds = page.bounds().ctx("measuring the page")?;
    let (pw, ph) = ((bounds.x1 - bounds.x0) as f64, (bounds.y1 - bounds.y0) as f64);
    for (k, r) in regions.iter().enumerate() {
        if r.x + r.w > pw + SLACK || r.y + r.h > ph + SLACK {
            return Err(EngineError::invalid_options(format!(
                "a region of page {index} ({k}th on that page: x {} y {} w {} h {}) goes off the page, \
                 which is {pw:.2} x {ph:.2} points as displayed",
                r.x, r.y, r.w, r.h
            )));
        }
    }
    raster_size(bounds, dpi, index + 1)?;
    let scale = dpi as f32 / 72.0;
    let mut pix = page
        .to_pixmap(&Matrix::new_scale(scale, scale), &Colorspace::device_rgb(), false, true)
        .ctx("rendering the page")?;
    let (w, h) = (pix.width(), pix.height());
    let row = w as usize * 3;
    let stride = pix.stride() as usize;
    if pix.n() == 3 && stride >= row {
        let samples = pix.samples_mut();
        paint_black(samples, stride, w, h, dpi, regions);
        let jpeg = if stride == row {
            encode_jpeg(w, h, &samples[..row * h as usize], REDACT_JPEG_QUALITY, dpi, encoder)?
        } else {
            let packed: Vec<u8> = samples.chunks(stride).take(h as usize).flat_map(|l| &l[..row]).copied().collect();
            encode_jpeg(w, h, &packed, REDACT_JPEG_QUALITY, dpi, encoder)?
        };
        return Ok(BurntPage { bounds, w, h, jpeg });
    }
    drop(pix);
    drop(page);
    let (w, h, mut rgb) = render_rgb(doc, index, dpi)?;
    paint_black(&mut rgb, w as usize * 3, w, h, dpi, regions);
    let jpeg = encode_jpeg(w, h, &rgb, REDACT_JPEG_QUALITY, dpi, encoder)?;
    Ok(BurntPage { bounds, w, h, jpeg })
}

/// Paints the regions black on an RGB raster with `stride` bytes per line; edges are
/// rounded outwards to whole pixels.
fn paint_black(rgb: &mut [u8], stride: usize, w: u32, h: u32, dpi: u32, regions: &[RedactRegion]) {
    let scale = dpi as f64 / 72.0;
    for r in regions {
        let x0 = ((r.x * scale).floor().max(0.0) as u32).min(w);
        let y0 = ((r.y * scale).floor().max(0.0) as u32).min(h);
        let x1 = (((r.x + r.w) * scale).ceil() as u32).min(w);
        let y1 = (((r.y + r.h) * scale).ceil() as u32).min(h);
        for y in y0..y1 {
            let line = y as usize * stride;
            rgb[line + x0 as usize * 3..line + x1 as usize * 3].fill(0);
        }
    }
}

/// Replaces everything the page shows by the JPEG, placed over the displayed page.
/// Returns the object numbers of its former content streams and annotations, for
/// [`delete_unshared`].
fn rebuild_page(doc: &mut PdfDocument, mut page: PdfObject, burnt: &BurntPage) -> Result<Vec<i32>> {
    let ctx = "rebuilding the redacted page";
    let BurntPage { bounds, w, h, ref jpeg } = *burnt;
    let grey = jpeg.grey;
    // The image XObject, stored as the JPEG bytes with a DCTDecode filter.
    let mut dict = doc.new_dict().ctx(ctx)?;
    dict.dict_put("Type", PdfObject::new_name("XObject").ctx(ctx)?).ctx(ctx)?;
    dict.dict_put("Subtype", PdfObject::new_name("Image").ctx(ctx)?).ctx(ctx)?;
    dict.dict_put("Width", PdfObject::new_int(w as i32).ctx(ctx)?).ctx(ctx)?;
    dict.dict_put("Height", PdfObject::new_int(h as i32).ctx(ctx)?).ctx(ctx)?;
    let cs = if grey { "DeviceGray" } else { "DeviceRGB" };
    dict.dict_put("ColorSpace", PdfObject::new_name(cs).ctx(ctx)?).ctx(ctx)?;
    dict.dict_put("BitsPerComponent", PdfObject::new_int(8).ctx(ctx)?).ctx(ctx)?;
    dict.dict_put("Filter", PdfObject::new_name("DCTDecode").ctx(ctx)?).ctx(ctx)?;
    let image = doc.add_stream(&Buffer::from_bytes(&jpeg.jpeg).ctx(ctx)?, Some(&dict), true).ctx(ctx)?;

    // Unit square of the image -> displayed page (y down) -> default user space.
    let (bw, bh) = (bounds.x1 - bounds.x0, bounds.y1 - bounds.y0);
    let mut m = Matrix::new(bw, 0.0, 0.0, -bh, bounds.x0, bounds.y0 + bh);
    let page_ctm = page.page_ctm().ctx(ctx)?;
    let inverse = page_ctm
        .invert()
        .ok_or_else(|| EngineError::new(crate::error::ErrorCode::InvalidPdf, "the page has a degenerate size"))?;
    m.concat(inverse);
    let content = format!("q {} {} {} {} {} {} cm /RedactedPage Do Q\n", m.a, m.b, m.c, m.d, m.e, m.f);
    let contents = doc.add_stream(&Buffer::from_bytes(content.as_bytes()).ctx(ctx)?, None, false).ctx(ctx)?;

    let mut xobjects = doc.new_dict().ctx(ctx)?;
    xobjects.dict_put("RedactedPage", image).ctx(ctx)?;
    let mut resources = doc.new_dict().ctx(ctx)?;
    resources.dict_put("XObject", xobjects).ctx(ctx)?;

    let mut former = referenced_objects(&page, "Contents")?;
    // Annotations and their form fields go.
    let mut annots = HashSet::new();
    if let Some(list) = page.get_dict("Annots").ctx(ctx)? {
        if list.is_array().unwrap_or(false) {
            for item in list.array_iter().ctx(ctx)? {
                let item = item.ctx(ctx)?;
                if item.is_indirect().unwrap_or(false) {
                    annots.insert(item.as_indirect().ctx(ctx)?);
                }
            }
        }
    }
    if !annots.is_empty() {
        remove_fields(doc, &annots)?;
    }

    page.dict_put("Contents", contents).ctx(ctx)?;
    page.dict_put("Resources", resources).ctx(ctx)?;
    for key in ["Annots", "StructParents", "Group", "Thumb", "PieceInfo", "B", "AA", "Tabs"] {
        page.dict_delete(key).ctx(ctx)?;
    }
    former.extend(annots);
    Ok(former)
}

/// Object numbers an entry of `page` refers to: the entry itself when indirect, and
/// the indirect items of the array it holds.
fn referenced_objects(page: &PdfObject, key: &str) -> Result<Vec<i32>> {
    let ctx = "reading a page";
    let mut nums = Vec::new();
    let Some(value) = page.get_dict(key).ctx(ctx)? else {
        return Ok(nums);
    };
    if value.is_indirect().unwrap_or(false) {
        nums.push(value.as_indirect().ctx(ctx)?);
    }
    if value.is_array().unwrap_or(false) {
        for item in value.array_iter().ctx(ctx)? {
            let item = item.ctx(ctx)?;
            if item.is_indirect().unwrap_or(false) {
                nums.push(item.as_indirect().ctx(ctx)?);
            }
        }
    }
    Ok(nums)
}

/// Deletes the former content streams and annotations of the redacted pages outright,
/// so that nothing that still refers to them (a structure tree's marked-content or
/// object references, an AcroForm's calculation order) keeps them in the file; the
/// save's garbage collection then drops everything only they used (images, fonts,
/// forms, appearance streams). An object another page lists as its own content or
/// annotation (shared by a broken or unusual file) is kept for that page.
fn delete_unshared(
    doc: &mut PdfDocument,
    pages: &[PdfObject],
    redacted: &BTreeMap<usize, Vec<RedactRegion>>,
    mut former: HashSet<i32>,
) -> Result<()> {
    for (i, page) in pages.iter().enumerate() {
        if former.is_empty() {
            return Ok(());
        }
        if redacted.contains_key(&i) {
            continue;
        }
        for key in ["Contents", "Annots"] {
            for num in referenced_objects(page, key)? {
                former.remove(&num);
            }
        }
    }
    for num in former {
        doc.delete_object(num).ctx("dropping the redacted page's former objects")?;
    }
    Ok(())
}

/// Removes the fields (or widget kids) whose object numbers are in `widgets` from the
/// AcroForm field tree; a field left without kids is removed too. The calculation
/// order (`/CO`) loses the same fields, else it would keep their values in the file.
fn remove_fields(doc: &PdfDocument, widgets: &HashSet<i32>) -> Result<()> {
    let ctx = "removing form fields";
    let Some(form) = doc.catalog().ctx(ctx)?.get_dict("AcroForm").ctx(ctx)? else {
        return Ok(());
    };
    let mut removed = widgets.clone();
    if let Some(mut fields) = form.get_dict("Fields").ctx(ctx)? {
        prune(&mut fields, &mut removed, 0)?;
    }
    if let Some(mut order) = form.get_dict("CO").ctx(ctx)? {
        if order.is_array().unwrap_or(false) {
            for i in (0..order.len().ctx(ctx)? as i32).rev() {
                let item = order.get_array(i).ctx(ctx)?;
                let num = item.filter(|f| f.is_indirect().unwrap_or(false)).and_then(|f| f.as_indirect().ok());
                if num.is_some_and(|n| removed.contains(&n)) {
                    order.array_delete(i).ctx(ctx)?;
                }
            }
        }
    }
    Ok(())
}

/// Prunes an array of field references; returns how many entries remain. `removed`
/// holds the widgets to remove and receives the fields removed with them.
fn prune(list: &mut PdfObject, removed: &mut HashSet<i32>, depth: u32) -> Result<usize> {
    let ctx = "removing form fields";
    if depth > 32 || !list.is_array().unwrap_or(false) {
        return Ok(list.len().unwrap_or(0));
    }
    let mut i = list.len().ctx(ctx)? as i32 - 1;
    while i >= 0 {
        let Some(item) = list.get_array(i).ctx(ctx)? else {
            i -= 1;
            continue;
        };
        let num = if item.is_indirect().unwrap_or(false) { item.as_indirect().ctx(ctx)? } else { 0 };
        let mut remove = num != 0 && removed.contains(&num);
        if !remove && item.is_dict().unwrap_or(false) {
            if let Some(mut kids) = item.get_dict("Kids").ctx(ctx)? {
                let had = kids.len().unwrap_or(0);
                if had > 0 && prune(&mut kids, removed, depth + 1)? == 0 {
                    remove = true;
                }
            }
        }
        if remove {
            if num != 0 {
                removed.insert(num);
            }
            list.array_delete(i).ctx(ctx)?;
        }
        i -= 1;
    }
    list.len().ctx(ctx)
}
