//! What a page holds, as the DOCX writer needs it: text lines with their runs' styles,
//! pictures (PNG) and tables, read from MuPDF's structured text; form field values its
//! appearance does not draw; OCR lines in place of a scan.

use mupdf::pdf::PdfPage;
use mupdf::{Colorspace, ImageFormat, Pixmap, TextPageFlags};

use super::items::{Item, Line, Run, Style};
use super::{fields, tables, unmapped};
use crate::error::{MuPdfResultExt, Result};
use crate::ocr::pipeline::{LineJson, PageJson, TEXT_PAGE_MIN_CHARS};

const MAX_IMAGE_PIXELS: u64 = 40_000_000;
/// A picture covering at least this share of an OCRed page is the scan itself: the
/// recognised text replaces it.
const SCAN_IMAGE_AREA: f32 = 0.5;

/// The family name of a PDF font: no subset tag, no style suffix.
fn family(name: &str) -> String {
    let mut n = name;
    if n.len() > 7 && n.as_bytes()[6] == b'+' && n[..6].bytes().all(|c| c.is_ascii_uppercase()) {
        n = &n[7..];
    }
    let mut n = n.to_owned();
    for sep in ['-', ','] {
        if let Some(i) = n.rfind(sep) {
            let suffix = n[i + 1..].to_ascii_lowercase();
            if [
                "bold",
                "italic",
                "oblique",
                "bolditalic",
                "boldoblique",
                "regular",
                "roman",
                "medium",
                "light",
                "semibold",
                "black",
                "it",
                "bd",
                "mt",
                "psmt",
                "boldmt",
                "italicmt",
                "bolditalicmt",
            ]
            .iter()
            .any(|s| suffix == *s)
            {
                n.truncate(i);
            }
        }
    }
    let n = n.trim_end_matches("MT").trim_end_matches("PS").to_owned();
    if n.is_empty() {
        "Calibri".to_owned()
    } else {
        n
    }
}

/// PNG bytes of an image, or `None` when it is too large or cannot be decoded.
fn image_png(image: &mupdf::Image) -> Option<Vec<u8>> {
    let (w, h) = (image.width() as u64, image.height() as u64);
    if w == 0 || h == 0 || w * h > MAX_IMAGE_PIXELS {
        return None;
    }
    let pix = image.to_pixmap().ok()?;
    let n = pix.n() as usize;
    let alpha = pix.alpha();
    let colours = n - alpha as usize;
    let png_of = |p: &Pixmap| -> Option<Vec<u8>> {
        let mut buf = Vec::new();
        p.write_to(&mut buf, ImageFormat::PNG).ok()?;
        Some(buf)
    };
    if colours == 1 || colours == 3 {
        if let Some(png) = png_of(&pix) {
            return Some(png);
        }
    }
    // Other colour spaces (CMYK, separations): convert to RGB by hand.
    let (pw, ph) = (pix.width() as usize, pix.height() as usize);
    let stride = pix.stride() as usize;
    let samples = pix.samples();
    let mut rgb = Pixmap::new_with_w_h(&Colorspace::device_rgb(), pw as i32, ph as i32, false).ok()?;
    let rstride = rgb.stride() as usize;
    let out = rgb.samples_mut();
    for y in 0..ph {
        for x in 0..pw {
            let s = &samples[y * stride + x * n..y * stride + x * n + n];
            let (r, g, b) = if colours >= 4 {
                let k = s[3] as u32;
                let f = |c: u8| (255 - (c as u32 + k).min(255)) as u8;
                (f(s[0]), f(s[1]), f(s[2]))
            } else {
                (s[0], s[0], s[0])
            };
            let o = y * rstride + x * 3;
            out[o] = r;
            out[o + 1] = g;
            out[o + 2] = b;
        }
    }
    png_of(&rgb)
}

/// Replaces the text blocks that form tables ([`tables::detect`]) by table items.
fn with_tables(items: Vec<(mupdf::Rect, Item)>, page_width: f32) -> Vec<(mupdf::Rect, Item)> {
    let cell_lines: Vec<Vec<tables::CellLine>> = items
        .iter()
        .enumerate()
        .map(|(b, (_, item))| match item {
            Item::Text(lines) => lines
                .iter()
                .enumerate()
                .map(|(i, l)| tables::CellLine {
                    block: b,
                    line: i,
                    x0: l.x0,
                    y0: l.y0,
                    x1: l.x1,
                    y1: l.y1,
                    text: l.runs.iter().map(|r| r.text.as_str()).collect(),
                })
                .collect(),
            _ => Vec::new(),
        })
        .collect();
    let found = tables::detect(&cell_lines, page_width);
    if found.is_empty() {
        return items;
    }
    let mut slots: Vec<Option<(mupdf::Rect, Item)>> = items.into_iter().map(Some).collect();
    let mut lines_of: Vec<Vec<Option<Line>>> = Vec::new();
    lines_of.resize_with(slots.len(), Vec::new);
    let mut out_tables = Vec::new();
    for t in &found {
        let mut rect: Option<mupdf::Rect> = None;
        for &b in &t.blocks {
            if let Some((r, Item::Text(lines))) = slots[b].take() {
                rect = Some(match rect {
                    None => r,
                    Some(u) => {
                        mupdf::Rect { x0: u.x0.min(r.x0), y0: u.y0.min(r.y0), x1: u.x1.max(r.x1), y1: u.y1.max(r.y1) }
                    }
                });
                lines_of[b] = lines.into_iter().map(Some).collect();
            }
        }
        let rows: Vec<Vec<Vec<Line>>> = t
            .cells
            .iter()
            .map(|row| {
                row.iter()
                    .map(|cell| {
                        cell.iter().filter_map(|&(b, i)| lines_of[b].get_mut(i).and_then(Option::take)).collect()
                    })
                    .collect()
            })
            .collect();
        let widths: Vec<f32> = t.columns.iter().map(|&(a, b)| b - a).collect();
        if let Some(r) = rect {
            out_tables.push((r, Item::Table(widths, rows)));
        }
    }
    let mut items: Vec<(mupdf::Rect, Item)> = slots.into_iter().flatten().collect();
    items.extend(out_tables);
    items
}

/// A recognised line as a [`Line`] in page coordinates: one run of the default font, its
/// size estimated from the line box (detected text boxes are about 1.3 x the font size).
fn ocr_line(l: &LineJson, bounds: mupdf::Rect) -> Line {
    let [x0, y0, x1, y1] = l.bbox;
    let size = ((y1 - y0) / 1.3).clamp(6.0, 72.0);
    let half_points = ((size * 2.0).round() as u32).clamp(12, 144);
    Line {
        x0: x0 + bounds.x0,
        x1: x1 + bounds.x0,
        y0: y0 + bounds.y0,
        y1: y1 + bounds.y0,
        size,
        unmapped_glyphs: 0,
        runs: vec![Run {
            style: Style {
                font: "Calibri".to_owned(),
                half_points,
                bold: false,
                italic: false,
                underline: false,
                strike: false,
                color: 0,
            },
            text: l.text.trim().to_owned(),
        }],
    }
}

/// The items of a page (text blocks, pictures, field values; tables when the page has a
/// text layer) with their boxes, in MuPDF's order, and whether the page has a text layer
/// (at least [`TEXT_PAGE_MIN_CHARS`] non-blank characters, the OCR rule).
pub(super) fn page_items(page: &PdfPage, bounds: mupdf::Rect) -> Result<(Vec<(mupdf::Rect, Item)>, bool)> {
    let text = page.to_text_page(TextPageFlags::PRESERVE_IMAGES).ctx("extracting the page text")?;
    let mut nonblank_chars = 0usize;
    let mut items: Vec<(mupdf::Rect, Item)> = Vec::new();
    for block in text.blocks() {
        match block.r#type() {
            mupdf::text_page::TextBlockType::Image => {
                let r = block.bounds();
                items.push((r, Item::Image(block.image().as_ref().and_then(image_png))));
            }
            mupdf::text_page::TextBlockType::Text => {
                let lines: Vec<Line> = block.lines().filter_map(|line| text_line(&line, &mut nonblank_chars)).collect();
                if !lines.is_empty() {
                    items.push((block.bounds(), Item::Text(lines)));
                }
            }
            _ => {}
        }
    }
    let has_text = nonblank_chars >= TEXT_PAGE_MIN_CHARS;
    let field_values = fields::undrawn_values(page, &items);
    items.extend(field_values);
    if has_text {
        items = with_tables(items, bounds.x1 - bounds.x0);
    }
    Ok((items, has_text))
}

/// A line of structured text as runs of one style; `None` when it has no glyph. Adds its
/// non-blank characters to `nonblank_chars`. A line of glyphs without a usable Unicode mapping
/// only is kept, with one empty run of their style, so that OCR can fill it
/// ([`super::unmapped`]); [`drop_empty_lines`] removes it otherwise.
fn text_line(line: &mupdf::text_page::TextLine, nonblank_chars: &mut usize) -> Option<Line> {
    let lb = line.bounds();
    let mut runs: Vec<Run> = Vec::new();
    let mut size_max = 0f32;
    let mut unmapped_glyphs = 0u32;
    let mut unmapped_style = None;
    for ch in line.chars() {
        let Some(c) = ch.char() else { continue };
        if !c.is_whitespace() {
            *nonblank_chars += 1; // the OCR rule counts every glyph
        }
        size_max = size_max.max(ch.size());
        if unmapped::unusable(c) {
            unmapped_glyphs += 1;
            unmapped_style.get_or_insert_with(|| char_style(&ch));
            continue;
        }
        let style = char_style(&ch);
        match runs.last_mut() {
            Some(last) if last.style == style => last.text.push(c),
            _ => runs.push(Run { style, text: c.to_string() }),
        }
    }
    if runs.is_empty() {
        runs.push(Run { style: unmapped_style?, text: String::new() });
    }
    Some(Line { x0: lb.x0, x1: lb.x1, y0: lb.y0, y1: lb.y1, size: size_max.max(1.0), runs, unmapped_glyphs })
}

/// Removes the lines without text (glyphs without Unicode that OCR did not replace) and the
/// text blocks left empty.
pub(super) fn drop_empty_lines(items: &mut Vec<(mupdf::Rect, Item)>) {
    let empty = |l: &Line| l.runs.iter().all(|r| r.text.trim().is_empty());
    for (_, item) in items.iter_mut() {
        match item {
            Item::Text(lines) => lines.retain(|l| !empty(l)),
            Item::Table(_, rows) => rows.iter_mut().flatten().for_each(|cell| cell.retain(|l| !empty(l))),
            Item::Image(_) => {}
        }
    }
    items.retain(|(_, item)| !matches!(item, Item::Text(lines) if lines.is_empty()));
}

/// The run style of a character: font family, size, bold/italic from the font or its name,
/// MuPDF's underline/strike-out flags, colour.
fn char_style(ch: &mupdf::text_page::TextChar) -> Style {
    let font = ch.font();
    let name = font.as_ref().map(crate::pdf::graft::font_name).unwrap_or_default();
    let lower = name.to_ascii_lowercase();
    let flags = ch.flags();
    let size = ch.size();
    Style {
        font: family(&name),
        half_points: ((size * 2.0).round() as u32).clamp(2, 3276),
        bold: font.as_ref().is_some_and(|f| f.is_bold())
            || flags.contains(mupdf::text_page::TextCharFlags::BOLD)
            || lower.contains("bold")
            || lower.contains("black")
            || lower.contains("heavy"),
        italic: font.as_ref().is_some_and(|f| f.is_italic()) || lower.contains("italic") || lower.contains("oblique"),
        underline: flags.contains(mupdf::text_page::TextCharFlags::UNDERLINE),
        strike: flags.contains(mupdf::text_page::TextCharFlags::STRIKEOUT),
        color: ch.argb() & 0xFF_FFFF,
    }
}

/// Puts the OCR of a page without a text layer in place of what the page had: the (few)
/// characters of its text layer, which OCR reads again from the rendering, and the scan
/// picture (any image covering half the page or more). Smaller pictures (figures, logos,
/// photos placed on the page) are kept in place. Returns the paragraphs to write after the
/// page's items when the text was upright only after a rotation (then boxes do not give
/// the reading order or paragraph breaks: the engine's blocks, in its reading order, become
/// one paragraph each).
pub(super) fn replace_with_ocr(
    items: &mut Vec<(mupdf::Rect, Item)>,
    read: &PageJson,
    bounds: mupdf::Rect,
) -> Vec<String> {
    let page_area = ((bounds.x1 - bounds.x0) * (bounds.y1 - bounds.y0)).max(1.0);
    items.retain(|(r, item)| match item {
        Item::Text(_) | Item::Table(..) => false,
        Item::Image(_) => (r.x1 - r.x0) * (r.y1 - r.y0) < SCAN_IMAGE_AREA * page_area,
    });
    if read.text_rotation != 0 {
        return read
            .blocks
            .iter()
            .map(|b| b.lines.iter().map(|l| l.text.trim()).filter(|t| !t.is_empty()).collect::<Vec<_>>().join(" "))
            .filter(|t| !t.is_empty())
            .collect();
    }
    for block in &read.blocks {
        let lines: Vec<Line> =
            block.lines.iter().filter(|l| !l.text.trim().is_empty()).map(|l| ocr_line(l, bounds)).collect();
        if !lines.is_empty() {
            let [x0, y0, x1, y1] = block.bbox;
            let r = mupdf::Rect { x0: x0 + bounds.x0, y0: y0 + bounds.y0, x1: x1 + bounds.x0, y1: y1 + bounds.y0 };
            items.push((r, Item::Text(lines)));
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn font_families_lose_subset_tags_and_style_suffixes() {
        assert_eq!(family("ABCDEF+Helvetica-Bold"), "Helvetica");
        assert_eq!(family("TimesNewRomanPS-BoldItalicMT"), "TimesNewRoman");
        assert_eq!(family("Arial,Bold"), "Arial");
        assert_eq!(family("CMR10"), "CMR10");
        assert_eq!(family(""), "Calibri");
    }
}
