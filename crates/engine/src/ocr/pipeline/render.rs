//! A page rendered for OCR: grey, at the resolution of its largest image within bounds.

use mupdf::pdf::PdfObject;
use mupdf::{Colorspace, Matrix};

use crate::error::{MuPdfResultExt, Result};

use super::init::ocr_failed;

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

/// Renders a loaded page in grey at its OCR resolution. Returns the dpi, the pixel ->
/// displayed point scales (x, y) and the pixels.
pub(super) fn render_for_ocr(
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
