//! The inputs of OCR opened as PDFs: a PDF as it is, a JPEG, PNG or WebP image wrapped in a
//! one-page PDF at its own resolution (WebP decoded here, images over the pixel cap refused).

use std::fs::File;
use std::io::Read;
use std::path::Path;

use mupdf::pdf::PdfDocument;
use mupdf::Colorspace;

use crate::error::{EngineError, ErrorCode, MuPdfResultExt, Result};
use crate::pdf::open::{open_pdf, PasswordPolicy, Source};

/// Sniffs an image type MuPDF should open.
fn image_magic(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if head.len() >= 12 && &head[0..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Opens the input as a PDF (images are converted to a one-page PDF). A PDF is opened from
/// its file, which MuPDF reads object by object: a document of several GB is never in
/// memory whole (an image input is one page, read whole to be wrapped).
pub(super) fn open_input(input: &Path, max_pages: Option<u32>) -> Result<PdfDocument> {
    let mut head = Vec::with_capacity(16);
    File::open(input)
        .and_then(|f| f.take(16).read_to_end(&mut head))
        .map_err(|e| EngineError::io("reading the input", e))?;
    if image_magic(&head).is_some() {
        let bytes = std::fs::read(input).map_err(|e| EngineError::io("reading the input", e))?;
        return image_to_pdf(&bytes);
    }
    Ok(open_pdf(Source::Path(input), PasswordPolicy::Refuse, max_pages)?.doc)
}

/// Wraps an image in a one-page PDF: the page is the image at its resolution (72 dpi
/// when it has none or an implausible one).
fn image_to_pdf(bytes: &[u8]) -> Result<PdfDocument> {
    let bad = |e: mupdf::Error| {
        EngineError::new(
            ErrorCode::InvalidImage,
            format!("the image cannot be read: {}", crate::error::mupdf_message(&e)),
        )
    };
    let image = if image_magic(bytes) == Some("image/webp") {
        webp_image(bytes)?
    } else {
        // MuPDF reads only the header here and decodes a PNG or JPEG whole later, before
        // scaling it down, so the size is checked now.
        let image = mupdf::Image::from_bytes(bytes).map_err(bad)?;
        check_image_size(image.width(), image.height())?;
        image
    };
    let (w, h) = (image.width() as f32, image.height() as f32);
    let (xr, yr) = image.resolution();
    let res = |r: i32| if (36..=2400).contains(&r) { r as f32 } else { 72.0 };
    let (pw, ph) = (w * 72.0 / res(xr), h * 72.0 / res(yr));
    let mut doc = PdfDocument::new();
    let img = doc.add_image(&image).map_err(bad)?;
    let content = format!("q {pw} 0 0 {ph} 0 0 cm /Im0 Do Q\n");
    let stream = doc
        .add_stream(&mupdf::Buffer::from_bytes(content.as_bytes()).ctx("buffer")?, None, false)
        .ctx("adding the page content")?;
    let page = doc
        .new_object_from_str(&format!(
            "<< /Type /Page /MediaBox [0 0 {pw} {ph}] /Resources << /XObject << /Im0 {} 0 R >> >> /Contents {} 0 R >>",
            img.as_indirect().ctx("image")?,
            stream.as_indirect().ctx("content")?
        ))
        .ctx("creating the page")?;
    let page = doc.add_object(&page).ctx("adding the page")?;
    doc.insert_page(0, &page).ctx("inserting the page")?;
    Ok(doc)
}

/// Largest image input accepted, in pixels (the render cap of every other operation).
pub const MAX_IMAGE_PIXELS: u64 = crate::pagework::render::MAX_PAGE_PIXELS;

/// Refuses an image with no pixels or more than [`MAX_IMAGE_PIXELS`], before it is decoded.
fn check_image_size(w: u32, h: u32) -> Result<()> {
    if w == 0 || h == 0 {
        return Err(EngineError::new(ErrorCode::InvalidImage, "the image has no pixels"));
    }
    if u64::from(w) * u64::from(h) > MAX_IMAGE_PIXELS {
        return Err(EngineError::new(
            ErrorCode::InvalidImage,
            format!("the image is {w} x {h} pixels, more than the limit of {MAX_IMAGE_PIXELS}"),
        ));
    }
    Ok(())
}

/// Decodes a WebP image (MuPDF cannot) into an RGB MuPDF image, alpha flattened on white.
fn webp_image(bytes: &[u8]) -> Result<mupdf::Image> {
    let bad = |m: String| EngineError::new(ErrorCode::InvalidImage, format!("the WebP image cannot be read: {m}"));
    let mut decoder = image_webp::WebPDecoder::new(std::io::Cursor::new(bytes)).map_err(|e| bad(e.to_string()))?;
    let (w, h) = decoder.dimensions();
    check_image_size(w, h)?;
    let n = if decoder.has_alpha() { 4 } else { 3 };
    let mut rgba = vec![0u8; w as usize * h as usize * n];
    decoder.read_image(&mut rgba).map_err(|e| bad(e.to_string()))?;
    let mut pixmap = mupdf::Pixmap::new_with_w_h(&Colorspace::device_rgb(), w as i32, h as i32, false)
        .ctx("allocating the image")?;
    let stride = pixmap.stride() as usize;
    let samples = pixmap.samples_mut();
    for (y, src) in rgba.chunks_exact(w as usize * n).enumerate() {
        let dst = &mut samples[y * stride..y * stride + w as usize * 3];
        for (d, p) in dst.chunks_exact_mut(3).zip(src.chunks_exact(n)) {
            let a = if n == 4 { u32::from(p[3]) } else { 255 };
            for c in 0..3 {
                // Over white: c * a + 255 * (1 - a), rounded.
                d[c] = ((u32::from(p[c]) * a + 255 * (255 - a) + 127) / 255) as u8;
            }
        }
    }
    mupdf::Image::from_pixmap(&pixmap).map_err(|e| bad(crate::error::mupdf_message(&e)))
}
