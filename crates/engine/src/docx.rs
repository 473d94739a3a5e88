//! pdf -> docx: an editable Word document written from MuPDF's structured text.
//!
//! # What is kept
//!
//! - Text as flowing paragraphs, blocks in reading order by a recursive XY-cut
//!   ([`reading_order`]: widest white bands and columns first, columns read whole, MuPDF's
//!   content order only for what cannot be cut; a right margin column such as printer's
//!   line numbers after the rest of the page). Lines of a block are joined with a space; a block is split into paragraphs where the vertical gap
//!   between two lines exceeds 0.8 x the font size, or the next line starts further left
//!   than a first-line indent.
//! - Per run: font family (subset prefix and style suffixes removed), size (half points),
//!   bold, italic, underline/strike-out (when MuPDF reports them) and colour (when not black).
//! - Paragraph alignment: centred when a single-line paragraph is centred on the page.
//!   Right-to-left paragraphs (mostly Arabic/Hebrew letters) are marked `bidi`/`rtl`.
//! - Images: every image block, in reading order, as an inline picture sized like on the
//!   page (capped to the text width), PNG-encoded. Images over 40 megapixels decoded are
//!   left out (counted in `images_skipped`), which also keeps decompression bombs cheap.
//! - One Word page per PDF page: a page break between pages, page size and orientation
//!   from the first selected page, 0.5 in margins.
//!
//! # What is not
//!
//! - Tables: aligned rows of single-line cells become Word tables ([`tables`]); tables
//!   with wrapped cells stay paragraphs.
//! - Absolute positions, text boxes, vector drawings, headers/footers as such, hyperlinks
//!   and form fields are not reproduced; a filled-in text or choice field whose value its
//!   appearance does not draw (`NeedAppearances`) gets the value as text ([`fields`]).
//! - Pages without a text layer (scans; the OCR rule) are listed in `pages_without_text`;
//!   with [`PdfToDocxOptions::ocr`] set they are OCRed: the recognised lines become
//!   paragraphs and replace the page-sized scan picture (smaller pictures are kept).
//! - Password-protected PDFs fail with `encrypted_input` (run `unlock` first).

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

use mupdf::{Colorspace, ImageFormat, Pixmap, TextPageFlags};

mod fields;
pub mod tables;

use crate::control::JobControl;
use crate::error::{EngineError, MuPdfResultExt, Result};
use crate::pdf::content::repair_page_contents;
use crate::pdf::open::{open_pdf, PasswordPolicy, Source};
use crate::pdf::pages::checked_indexes;
use crate::pdf::save::write_atomically;

/// Recognises the text of a page that has none (a scan). Implemented by the OCR pipeline
/// ([`crate::ocr_pipeline::EngineOcr`]).
pub trait PageOcr: Send + Sync {
    /// The blocks of page `index` (0-based) of `doc`, in reading order, boxes in displayed
    /// points from the top-left of the page.
    fn recognise(&self, doc: &mupdf::pdf::PdfDocument, index: usize) -> Result<crate::ocr_pipeline::PageJson>;
}

/// Options of [`pdf_to_docx`].
#[derive(Clone, Default)]
pub struct PdfToDocxOptions {
    /// 0-based pages to convert; `None` or empty = all.
    pub pages: Option<Vec<i64>>,
    /// Refuse inputs with more pages than this.
    pub max_pages: Option<u32>,
    /// OCR for pages without text; `None` = keep their images only.
    pub ocr: Option<Arc<dyn PageOcr>>,
}

/// What [`pdf_to_docx`] produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PdfToDocxResult {
    /// Pages converted.
    pub pages_processed: u32,
    /// Pages of the input.
    pub page_count: u32,
    /// Paragraphs written.
    pub paragraphs: u32,
    /// Pictures embedded.
    pub images: u32,
    /// Images left out (too large).
    pub images_skipped: u32,
    /// Tables written as Word tables.
    pub tables: u32,
    /// 0-based indexes of converted pages that have no text layer (fewer than
    /// [`crate::ocr_pipeline::TEXT_PAGE_MIN_CHARS`] non-blank characters, the OCR rule).
    pub pages_without_text: Vec<u32>,
    /// Those of them that were OCRed (all of them when [`PdfToDocxOptions::ocr`] is set).
    pub pages_ocred: Vec<u32>,
    /// Bytes written.
    pub output_bytes: u64,
}

const MAX_IMAGE_PIXELS: u64 = 40_000_000;
const EMU_PER_PT: f64 = 12_700.0;
/// A picture covering at least this share of an OCRed page is the scan itself: the
/// recognised text replaces it.
const SCAN_IMAGE_AREA: f32 = 0.5;

#[derive(Clone, PartialEq)]
struct Style {
    font: String,
    half_points: u32,
    bold: bool,
    italic: bool,
    underline: bool,
    strike: bool,
    color: u32,
}

struct Run {
    style: Style,
    text: String,
}

struct Line {
    x0: f32,
    x1: f32,
    y0: f32,
    y1: f32,
    size: f32,
    runs: Vec<Run>,
}

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
            if ["bold", "italic", "oblique", "bolditalic", "boldoblique", "regular", "roman", "medium", "light", "semibold", "black", "it", "bd", "mt", "psmt", "boldmt", "italicmt", "bolditalicmt"]
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

fn xml_escape(out: &mut String, s: &str) {
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\t' | '\n' => out.push(' '),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
}

fn is_rtl_char(c: char) -> bool {
    matches!(c as u32, 0x0590..=0x08FF | 0xFB1D..=0xFDFF | 0xFE70..=0xFEFF)
}

struct Writer {
    body: String,
    media: Vec<(String, Vec<u8>)>,
    paragraphs: u32,
    images_skipped: u32,
    tables: u32,
    text_width_pt: f64,
}

impl Writer {
    fn paragraph(&mut self, lines: &[Line], centred: bool) {
        let mut runs: Vec<Run> = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            for (j, run) in line.runs.iter().enumerate() {
                let mut text = run.text.clone();
                // Lines of a paragraph are joined with one space; a word hyphenated at the
                // end of a line ("adip-" + "iscing") is joined back, as pdftotext does.
                if i > 0 && j == 0 {
                    let starts_lower = text.chars().next().is_some_and(|c| c.is_lowercase());
                    let hyphenated = runs.last_mut().filter(|r| {
                        let mut it = r.text.trim_end().chars().rev();
                        matches!((it.next(), it.next()), (Some('-' | '\u{00AD}'), Some(c)) if c.is_alphabetic())
                    });
                    match hyphenated {
                        Some(last) if starts_lower => {
                            let trimmed = last.text.trim_end();
                            let hyphen = trimmed.chars().next_back().map_or(0, char::len_utf8);
                            let keep = trimmed.len() - hyphen;
                            last.text.truncate(keep);
                        }
                        _ => {
                            let prev_space = runs.last().is_some_and(|r| r.text.ends_with(' '));
                            if !prev_space && !text.starts_with(' ') {
                                text.insert(0, ' ');
                            }
                        }
                    }
                }
                match runs.last_mut() {
                    Some(last) if last.style == run.style => last.text.push_str(&text),
                    _ => runs.push(Run { style: run.style.clone(), text }),
                }
            }
        }
        let all: String = runs.iter().map(|r| r.text.as_str()).collect();
        if all.trim().is_empty() {
            return;
        }
        let letters = all.chars().filter(|c| c.is_alphabetic()).count();
        let rtl = letters > 0 && all.chars().filter(|&c| is_rtl_char(c)).count() * 2 > letters;
        self.body.push_str("<w:p><w:pPr><w:spacing w:after=\"120\"/>");
        if rtl {
            self.body.push_str("<w:bidi/>");
        }
        if centred {
            self.body.push_str("<w:jc w:val=\"center\"/>");
        }
        self.body.push_str("</w:pPr>");
        for run in &runs {
            let s = &run.style;
            self.body.push_str("<w:r><w:rPr>");
            let mut f = String::new();
            xml_escape(&mut f, &s.font);
            let _ = write!(self.body, "<w:rFonts w:ascii=\"{f}\" w:hAnsi=\"{f}\" w:eastAsia=\"{f}\" w:cs=\"{f}\"/>");
            if s.bold {
                self.body.push_str("<w:b/><w:bCs/>");
            }
            if s.italic {
                self.body.push_str("<w:i/><w:iCs/>");
            }
            if s.strike {
                self.body.push_str("<w:strike/>");
            }
            if s.color & 0xFF_FFFF != 0 {
                let _ = write!(self.body, "<w:color w:val=\"{:06X}\"/>", s.color & 0xFF_FFFF);
            }
            let _ = write!(self.body, "<w:sz w:val=\"{0}\"/><w:szCs w:val=\"{0}\"/>", s.half_points);
            if s.underline {
                self.body.push_str("<w:u w:val=\"single\"/>");
            }
            if rtl {
                self.body.push_str("<w:rtl/>");
            }
            self.body.push_str("</w:rPr><w:t xml:space=\"preserve\">");
            xml_escape(&mut self.body, &run.text);
            self.body.push_str("</w:t></w:r>");
        }
        self.body.push_str("</w:p>");
        self.paragraphs += 1;
    }

    fn plain_paragraph(&mut self, text: &str) {
        self.body.push_str("<w:p><w:r><w:t xml:space=\"preserve\">");
        xml_escape(&mut self.body, text);
        self.body.push_str("</w:t></w:r></w:p>");
        self.paragraphs += 1;
    }

    fn picture(&mut self, png: Vec<u8>, width_pt: f64, height_pt: f64) {
        let n = self.media.len() + 1;
        let rid = format!("rIdImg{n}");
        self.media.push((format!("image{n}.png"), png));
        let scale = if width_pt > self.text_width_pt { self.text_width_pt / width_pt } else { 1.0 };
        let cx = (width_pt * scale * EMU_PER_PT).max(1.0) as u64;
        let cy = (height_pt * scale * EMU_PER_PT).max(1.0) as u64;
        let _ = write!(
            self.body,
            "<w:p><w:r><w:drawing><wp:inline distT=\"0\" distB=\"0\" distL=\"0\" distR=\"0\"><wp:extent cx=\"{cx}\" cy=\"{cy}\"/><wp:docPr id=\"{n}\" name=\"Picture {n}\"/><a:graphic xmlns:a=\"http://schemas.openxmlformats.org/drawingml/2006/main\"><a:graphicData uri=\"http://schemas.openxmlformats.org/drawingml/2006/picture\"><pic:pic xmlns:pic=\"http://schemas.openxmlformats.org/drawingml/2006/picture\"><pic:nvPicPr><pic:cNvPr id=\"{n}\" name=\"image{n}.png\"/><pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip r:embed=\"{rid}\"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill><pic:spPr><a:xfrm><a:off x=\"0\" y=\"0\"/><a:ext cx=\"{cx}\" cy=\"{cy}\"/></a:xfrm><a:prstGeom prst=\"rect\"><a:avLst/></a:prstGeom></pic:spPr></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>"
        );
    }

    /// A Word table with single borders; column widths proportional to the PDF's, scaled to
    /// the text width. Cells of one line group each become one paragraph (lines joined).
    fn table(&mut self, widths: &[f32], rows: &[Vec<Vec<Line>>]) {
        // Column widths: the cell extents plus their share of the gaps, scaled to fit.
        let total: f32 = widths.iter().sum::<f32>().max(1.0);
        let avail_tw = self.text_width_pt * 20.0;
        let tw: Vec<u64> = widths.iter().map(|w| ((*w / total) as f64 * avail_tw).round().max(200.0) as u64).collect();
        self.body.push_str("<w:tbl><w:tblPr><w:tblW w:w=\"0\" w:type=\"auto\"/><w:tblBorders>");
        for side in ["top", "left", "bottom", "right", "insideH", "insideV"] {
            let _ = write!(self.body, "<w:{side} w:val=\"single\" w:sz=\"4\" w:space=\"0\" w:color=\"auto\"/>");
        }
        self.body.push_str("</w:tblBorders><w:tblLayout w:type=\"fixed\"/></w:tblPr><w:tblGrid>");
        for w in &tw {
            let _ = write!(self.body, "<w:gridCol w:w=\"{w}\"/>");
        }
        self.body.push_str("</w:tblGrid>");
        for row in rows {
            self.body.push_str("<w:tr>");
            for (c, cell) in row.iter().enumerate() {
                let _ = write!(self.body, "<w:tc><w:tcPr><w:tcW w:w=\"{}\" w:type=\"dxa\"/></w:tcPr>", tw.get(c).copied().unwrap_or(200));
                let before = self.body.len();
                if !cell.is_empty() {
                    self.paragraph(cell, false);
                }
                if self.body.len() == before {
                    self.body.push_str("<w:p/>");
                }
                self.body.push_str("</w:tc>");
            }
            self.body.push_str("</w:tr>");
        }
        self.body.push_str("</w:tbl>");
        self.tables += 1;
    }

    fn page_break(&mut self) {
        self.body.push_str("<w:p><w:r><w:br w:type=\"page\"/></w:r></w:p>");
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

enum Item {
    Text(Vec<Line>),
    /// A detected table: column widths (points) and rows of cells (lines of each cell).
    Table(Vec<f32>, Vec<Vec<Vec<Line>>>),
    /// PNG bytes, or `None` when the image was left out.
    Image(Option<Vec<u8>>),
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
                    Some(u) => mupdf::Rect { x0: u.x0.min(r.x0), y0: u.y0.min(r.y0), x1: u.x1.max(r.x1), y1: u.y1.max(r.y1) },
                });
                lines_of[b] = lines.into_iter().map(Some).collect();
            }
        }
        let rows: Vec<Vec<Vec<Line>>> = t
            .cells
            .iter()
            .map(|row| row.iter().map(|cell| cell.iter().filter_map(|&(b, i)| lines_of[b].get_mut(i).and_then(Option::take)).collect()).collect())
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

/// Splits a text block into paragraphs at large gaps and writes them.
fn emit_text(w: &mut Writer, lines: &[Line], bounds: mupdf::Rect) {
    let mut start = 0;
    for i in 1..=lines.len() {
        let split = i == lines.len() || {
            let (prev, next) = (&lines[i - 1], &lines[i]);
            let gap = next.y0 - prev.y1;
            gap > 0.8 * prev.size.max(next.size)
                || next.x0 > prev.x0 + 2.0 * next.size && i > start + 1 && next.x1 < prev.x1
        };
        if split {
            let para = &lines[start..i];
            let page_mid = (bounds.x0 + bounds.x1) / 2.0;
            let centred = para.len() == 1 && {
                let mid = (para[0].x0 + para[0].x1) / 2.0;
                (mid - page_mid).abs() < 6.0 && para[0].x0 > bounds.x0 + 0.15 * (bounds.x1 - bounds.x0)
            };
            w.paragraph(para, centred);
            start = i;
        }
    }
}

/// A recognised line as a [`Line`] in page coordinates: one run of the default font, its
/// size estimated from the line box (detected text boxes are about 1.3 x the font size).
fn ocr_line(l: &crate::ocr_pipeline::LineJson, bounds: mupdf::Rect) -> Line {
    let [x0, y0, x1, y1] = l.bbox;
    let size = ((y1 - y0) / 1.3).clamp(6.0, 72.0);
    let half_points = ((size * 2.0).round() as u32).clamp(12, 144);
    Line {
        x0: x0 + bounds.x0,
        x1: x1 + bounds.x0,
        y0: y0 + bounds.y0,
        y1: y1 + bounds.y0,
        size,
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

/// Minimum white space (points) that separates columns / bands in [`reading_order`].
const MIN_COLUMN_GAP: f32 = 9.0;
const MIN_BAND_GAP: f32 = 3.0;
/// Gaps at least this share of the widest are cut together in one step of [`reading_order`].
const WIDEST_GAP_SHARE: f32 = 0.8;

/// Reading order of the blocks of a page by recursive XY-cut: split the set at the widest
/// white band across it (horizontal bands top to bottom, or columns left to right, whichever
/// gap is wider relative to its threshold); a set that cannot be cut keeps MuPDF's order.
fn reading_order(rects: &[mupdf::Rect]) -> Vec<usize> {
    fn groups(idx: &[usize], rects: &[mupdf::Rect], vertical: bool) -> (Vec<Vec<usize>>, f32) {
        let key = |i: usize| if vertical { (rects[i].x0, rects[i].x1) } else { (rects[i].y0, rects[i].y1) };
        let mut sorted = idx.to_vec();
        sorted.sort_by(|&a, &b| key(a).0.total_cmp(&key(b).0));
        // Runs of overlapping blocks, each with the white gap before it.
        let mut runs: Vec<(f32, Vec<usize>)> = Vec::new();
        let mut end = f32::NEG_INFINITY;
        for i in sorted {
            let (a, b) = key(i);
            if runs.is_empty() || a > end {
                runs.push((a - end, vec![i]));
                end = b;
            } else {
                runs.last_mut().unwrap().1.push(i);
                end = end.max(b);
            }
        }
        let min = if vertical { MIN_COLUMN_GAP } else { MIN_BAND_GAP };
        let widest = runs.iter().skip(1).map(|r| r.0).fold(0f32, f32::max);
        // Cut only at the gaps nearly as wide as the widest: narrower ones are cut later,
        // inside the parts, where the other direction may come first (the bands of a
        // two-column page under a title are columns first, then paragraphs).
        let cut_at = min.max(WIDEST_GAP_SHARE * widest);
        let mut out: Vec<Vec<usize>> = Vec::new();
        for (k, (gap, members)) in runs.into_iter().enumerate() {
            if k == 0 || gap >= cut_at {
                out.push(members);
            } else {
                out.last_mut().unwrap().extend(members);
            }
        }
        (out, if widest >= min { widest } else { 0.0 })
    }
    fn cut(idx: Vec<usize>, rects: &[mupdf::Rect], order: &mut Vec<usize>, depth: u32) {
        if idx.len() <= 1 || depth > 64 {
            let mut idx = idx;
            idx.sort_unstable();
            order.extend(idx);
            return;
        }
        let (bands, band_gap) = groups(&idx, rects, false);
        let (cols, col_gap) = groups(&idx, rects, true);
        let parts = if bands.len() > 1 && (cols.len() <= 1 || band_gap / MIN_BAND_GAP >= col_gap / MIN_COLUMN_GAP) {
            bands
        } else if cols.len() > 1 {
            cols
        } else {
            let loose = loose_bands(&idx, rects);
            if loose.len() > 1 {
                loose
            } else {
                let mut idx = idx;
                idx.sort_unstable(); // MuPDF's (content) order
                order.extend(idx);
                return;
            }
        };
        for mut part in parts {
            part.sort_unstable();
            cut(part, rects, order, depth + 1);
        }
    }
    /// Bands of a one-column stack of blocks with no white band across it, where consecutive
    /// blocks overlap by at most a third of the smaller height: lines whose boxes (ascent to
    /// descent) touch, such as footnotes set one block per line, which are read top to
    /// bottom whatever their order in the content stream. Only for a stack (every block
    /// overlaps every other horizontally): side-by-side blocks keep the content order, which
    /// reads a row of a two-column list better than cutting across it.
    fn loose_bands(idx: &[usize], rects: &[mupdf::Rect]) -> Vec<Vec<usize>> {
        let max_x0 = idx.iter().map(|&i| rects[i].x0).fold(f32::NEG_INFINITY, f32::max);
        let min_x1 = idx.iter().map(|&i| rects[i].x1).fold(f32::INFINITY, f32::min);
        if max_x0 >= min_x1 {
            return vec![idx.to_vec()];
        }
        let mut sorted = idx.to_vec();
        sorted.sort_by(|&a, &b| rects[a].y0.total_cmp(&rects[b].y0));
        let mut out: Vec<Vec<usize>> = Vec::new();
        let (mut end, mut last_h) = (f32::NEG_INFINITY, 0f32);
        for i in sorted {
            let (y0, y1) = (rects[i].y0, rects[i].y1);
            let h = y1 - y0;
            if out.is_empty() || end - y0 <= h.min(last_h) / 3.0 {
                out.push(vec![i]);
                end = y1;
                last_h = h;
            } else {
                out.last_mut().unwrap().push(i);
                if y1 > end {
                    end = y1;
                    last_h = h;
                }
            }
        }
        out
    }
    let margins = right_margin_columns(rects);
    let body: Vec<usize> = (0..rects.len()).filter(|i| !margins.contains(i)).collect();
    let mut order = Vec::with_capacity(rects.len());
    cut(body, rects, &mut order, 0);
    order.extend(margins);
    order
}

/// A right margin column is at most this share of the width of the page's content.
const MARGIN_COLUMN_MAX_WIDTH: f32 = 0.1;
/// A right margin column is at least this share of the height of the page's content.
const MARGIN_COLUMN_MIN_HEIGHT: f32 = 0.4;

/// Right margin columns of a page: narrow, tall blocks at the right edge of the content with
/// nothing above or below them (every other block lies wholly to their left) — printer's
/// line numbers, a side stamp. [`reading_order`] reads them after the rest of the page, as
/// pdftotext does, not between the text column and the material under it (a footer, a
/// printer's slug). A left margin column needs no rule: the XY-cut reads it before the
/// column beside it, after the bands above, again as pdftotext does.
fn right_margin_columns(rects: &[mupdf::Rect]) -> Vec<usize> {
    if rects.len() < 2 {
        return Vec::new();
    }
    // The content's bounding box.
    let cx0 = rects.iter().map(|r| r.x0).fold(f32::INFINITY, f32::min);
    let cx1 = rects.iter().map(|r| r.x1).fold(f32::NEG_INFINITY, f32::max);
    let cy0 = rects.iter().map(|r| r.y0).fold(f32::INFINITY, f32::min);
    let cy1 = rects.iter().map(|r| r.y1).fold(f32::NEG_INFINITY, f32::max);
    let (cw, ch) = (cx1 - cx0, cy1 - cy0);
    let mut out: Vec<usize> = (0..rects.len())
        .filter(|&i| {
            let m = rects[i];
            m.x1 - m.x0 <= MARGIN_COLUMN_MAX_WIDTH * cw
                && m.y1 - m.y0 >= MARGIN_COLUMN_MIN_HEIGHT * ch
                && rects.iter().enumerate().all(|(j, r)| j == i || r.x1 <= m.x0)
        })
        .collect();
    out.sort_by(|&a, &b| rects[a].x0.total_cmp(&rects[b].x0));
    out
}

/// Converts the PDF at `input` to a DOCX at `output`.
pub fn pdf_to_docx(
    input: &Path,
    output: &Path,
    options: &PdfToDocxOptions,
    control: &JobControl,
) -> Result<PdfToDocxResult> {
    control.checkpoint()?;
    let opened = open_pdf(Source::Path(input), PasswordPolicy::Refuse, options.max_pages)?;
    let page_count = opened.page_count();
    let selected: Vec<usize> = match &options.pages {
        Some(p) if !p.is_empty() => checked_indexes(p, page_count)?.into_iter().collect(),
        _ => (0..page_count).collect(),
    };
    let scratch = JobControl::new();
    repair_page_contents(selected.iter().map(|&i| (i + 1, &opened.pages[i])), &scratch)?;
    control.start(selected.len() as u64)?;

    let first = opened.doc.load_page(selected[0] as i32).ctx("loading the page")?;
    let fb = first.bounds().ctx("measuring the page")?;
    // Word accepts page sides of 1 to 22 inches; larger pages (posters, the "enormous page"
    // of the corpus) are clamped, and pictures scale down to the text width.
    let clamp = |v: f32| (v as f64).clamp(72.0, 1584.0);
    let (page_w, page_h) = (clamp(fb.x1 - fb.x0), clamp(fb.y1 - fb.y0));
    let margin_pt = 36.0;
    let mut w = Writer {
        body: String::new(),
        media: Vec::new(),
        paragraphs: 0,
        images_skipped: 0,
        tables: 0,
        text_width_pt: (page_w - 2.0 * margin_pt).max(72.0),
    };
    let mut without_text = Vec::new();
    let mut ocred = Vec::new();
    for (k, &index) in selected.iter().enumerate() {
        control.checkpoint()?;
        if k > 0 {
            w.page_break();
        }
        let page = opened.doc.load_pdf_page(index as i32).ctx("loading the page")?;
        let bounds = page.bounds().ctx("measuring the page")?;
        let text = page
            .to_text_page(TextPageFlags::PRESERVE_IMAGES)
            .ctx("extracting the page text")?;
        let mut nonblank_chars = 0usize;
        let mut items: Vec<(mupdf::Rect, Item)> = Vec::new();
        for block in text.blocks() {
            match block.r#type() {
                mupdf::text_page::TextBlockType::Image => {
                    let r = block.bounds();
                    items.push((r, Item::Image(block.image().as_ref().and_then(image_png))));
                }
                mupdf::text_page::TextBlockType::Text => {
                    let mut lines: Vec<Line> = Vec::new();
                    for line in block.lines() {
                        let lb = line.bounds();
                        let mut runs: Vec<Run> = Vec::new();
                        let mut size_max = 0f32;
                        for ch in line.chars() {
                            if ch.char().is_some_and(|c| !c.is_whitespace()) {
                                nonblank_chars += 1; // the OCR rule counts every glyph
                            }
                            // U+FFFD: a glyph without a Unicode mapping; not text.
                            let Some(c) = ch.char().filter(|&c| c != '\u{FFFD}') else { continue };
                            let font = ch.font();
                            let name = font.as_ref().map(|f| f.name().to_owned()).unwrap_or_default();
                            let lower = name.to_ascii_lowercase();
                            let flags = ch.flags();
                            let size = ch.size();
                            size_max = size_max.max(size);
                            let style = Style {
                                font: family(&name),
                                half_points: ((size * 2.0).round() as u32).clamp(2, 3276),
                                bold: font.as_ref().is_some_and(|f| f.is_bold())
                                    || flags.contains(mupdf::text_page::TextCharFlags::BOLD)
                                    || lower.contains("bold")
                                    || lower.contains("black")
                                    || lower.contains("heavy"),
                                italic: font.as_ref().is_some_and(|f| f.is_italic())
                                    || lower.contains("italic")
                                    || lower.contains("oblique"),
                                underline: flags.contains(mupdf::text_page::TextCharFlags::UNDERLINE),
                                strike: flags.contains(mupdf::text_page::TextCharFlags::STRIKEOUT),
                                color: ch.argb() & 0xFF_FFFF,
                            };
                            match runs.last_mut() {
                                Some(last) if last.style == style => last.text.push(c),
                                _ => runs.push(Run { style, text: c.to_string() }),
                            }
                        }
                        if runs.is_empty() {
                            continue;
                        }
                        lines.push(Line { x0: lb.x0, x1: lb.x1, y0: lb.y0, y1: lb.y1, size: size_max.max(1.0), runs });
                    }
                    if !lines.is_empty() {
                        items.push((block.bounds(), Item::Text(lines)));
                    }
                }
                _ => {}
            }
        }
        let page_has_text = nonblank_chars >= crate::ocr_pipeline::TEXT_PAGE_MIN_CHARS;
        let field_values = fields::undrawn_values(&page, &items);
        items.extend(field_values);
        if page_has_text {
            items = with_tables(items, bounds.x1 - bounds.x0);
        }
        let mut ocr_rotated: Option<Vec<String>> = None;
        let mut ocr_blocks = false;
        if !page_has_text {
            without_text.push(index as u32);
            if let Some(ocr) = &options.ocr {
                let read = ocr.recognise(&opened.doc, index)?;
                control.checkpoint()?;
                ocred.push(index as u32);
                // The recognised text replaces what the page had: the (few) characters of
                // its text layer, which OCR reads again from the rendering, and the scan
                // picture (any image covering half the page or more). Smaller pictures
                // (figures, logos, photos placed on the page) are kept in place.
                let page_area = ((bounds.x1 - bounds.x0) * (bounds.y1 - bounds.y0)).max(1.0);
                items.retain(|(r, item)| match item {
                    Item::Text(_) | Item::Table(..) => false,
                    Item::Image(_) => (r.x1 - r.x0) * (r.y1 - r.y0) < SCAN_IMAGE_AREA * page_area,
                });
                if read.text_rotation == 0 {
                    ocr_blocks = true;
                    for block in &read.blocks {
                        let lines: Vec<Line> = block
                            .lines
                            .iter()
                            .filter(|l| !l.text.trim().is_empty())
                            .map(|l| ocr_line(l, bounds))
                            .collect();
                        if !lines.is_empty() {
                            let [x0, y0, x1, y1] = block.bbox;
                            let r = mupdf::Rect { x0: x0 + bounds.x0, y0: y0 + bounds.y0, x1: x1 + bounds.x0, y1: y1 + bounds.y0 };
                            items.push((r, Item::Text(lines)));
                        }
                    }
                } else {
                    // Text upright only after a rotation: boxes do not give the reading order
                    // or paragraph breaks; the engine's blocks (in its reading order) are
                    // written one paragraph each, after the pictures kept.
                    ocr_rotated = Some(
                        read.blocks
                            .iter()
                            .map(|b| b.lines.iter().map(|l| l.text.trim()).filter(|t| !t.is_empty()).collect::<Vec<_>>().join(" "))
                            .filter(|t| !t.is_empty())
                            .collect(),
                    );
                }
            }
        }
        let rects: Vec<mupdf::Rect> = items.iter().map(|(r, _)| *r).collect();
        let mut items: Vec<Option<Item>> = items.into_iter().map(|(_, i)| Some(i)).collect();
        let mut order = reading_order(&rects);
        if ocr_blocks {
            // The recognised blocks keep the OCR's reading order (that of the JSON and of the
            // searchable PDF's text layer, crates/ocr/src/layout.rs); this order only places the
            // pictures kept among them. The text items are exactly the OCR blocks, pushed in order.
            let is_text = |k: usize| matches!(items[k], Some(Item::Text(_)));
            let mut texts: Vec<usize> = order.iter().copied().filter(|&k| is_text(k)).collect();
            texts.sort_unstable();
            let mut next = texts.into_iter();
            for k in order.iter_mut() {
                if is_text(*k) {
                    *k = next.next().unwrap();
                }
            }
        }
        for k in order {
            match items[k].take() {
                Some(Item::Image(Some(png))) => {
                    let r = rects[k];
                    w.picture(png, (r.x1 - r.x0).max(1.0) as f64, (r.y1 - r.y0).max(1.0) as f64);
                }
                Some(Item::Image(None)) => w.images_skipped += 1,
                Some(Item::Text(lines)) => emit_text(&mut w, &lines, bounds),
                Some(Item::Table(widths, rows)) => w.table(&widths, &rows),
                None => {}
            }
        }
        for para in ocr_rotated.unwrap_or_default() {
            w.plain_paragraph(&para);
        }
        control.advance()?;
    }

    let body = std::mem::take(&mut w.body);
    let images = w.media.len() as u32;
    let (pw_tw, ph_tw) = ((page_w * 20.0).round() as u64, (page_h * 20.0).round() as u64);
    let margin_tw = (margin_pt * 20.0) as u64;
    let orient = if page_w > page_h { " w:orient=\"landscape\"" } else { "" };
    let document = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\" xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\" xmlns:wp=\"http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing\" xmlns:a=\"http://schemas.openxmlformats.org/drawingml/2006/main\" xmlns:pic=\"http://schemas.openxmlformats.org/drawingml/2006/picture\"><w:body>{body}<w:sectPr><w:pgSz w:w=\"{pw_tw}\" w:h=\"{ph_tw}\"{orient}/><w:pgMar w:top=\"{margin_tw}\" w:right=\"{margin_tw}\" w:bottom=\"{margin_tw}\" w:left=\"{margin_tw}\" w:header=\"0\" w:footer=\"0\" w:gutter=\"0\"/></w:sectPr></w:body></w:document>"
    );
    let mut rels = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\"><Relationship Id=\"rIdStyles\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles\" Target=\"styles.xml\"/>");
    for (i, (name, _)) in w.media.iter().enumerate() {
        let _ = write!(rels, "<Relationship Id=\"rIdImg{}\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/image\" Target=\"media/{name}\"/>", i + 1);
    }
    rels.push_str("</Relationships>");
    let content_types = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"><Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/><Default Extension=\"xml\" ContentType=\"application/xml\"/><Default Extension=\"png\" ContentType=\"image/png\"/><Override PartName=\"/word/document.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml\"/><Override PartName=\"/word/styles.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml\"/><Override PartName=\"/docProps/app.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.extended-properties+xml\"/></Types>";
    let root_rels = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\"><Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument\" Target=\"word/document.xml\"/><Relationship Id=\"rId2\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties\" Target=\"docProps/app.xml\"/></Relationships>";
    let styles = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<w:styles xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:docDefaults><w:rPrDefault><w:rPr><w:rFonts w:ascii=\"Calibri\" w:hAnsi=\"Calibri\" w:eastAsia=\"Calibri\" w:cs=\"Calibri\"/><w:sz w:val=\"22\"/><w:szCs w:val=\"22\"/><w:lang w:val=\"en-US\"/></w:rPr></w:rPrDefault><w:pPrDefault><w:pPr><w:spacing w:after=\"0\" w:line=\"240\" w:lineRule=\"auto\"/></w:pPr></w:pPrDefault></w:docDefaults><w:style w:type=\"paragraph\" w:default=\"1\" w:styleId=\"Normal\"><w:name w:val=\"Normal\"/></w:style></w:styles>";
    let app = format!("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<Properties xmlns=\"http://schemas.openxmlformats.org/officeDocument/2006/extended-properties\"><Application>docproc</Application><Pages>{}</Pages></Properties>", selected.len());

    let media = std::mem::take(&mut w.media);
    let output_bytes = write_atomically(output, control, |tmp| {
        let file = File::create(tmp).map_err(|e| EngineError::io("creating the output", e))?;
        let mut zip = zip::ZipWriter::new(BufWriter::new(file));
        let deflate = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        let stored = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
        let zerr = |e: zip::result::ZipError| EngineError::io("writing the DOCX", std::io::Error::other(e));
        let parts: [(&str, &[u8]); 6] = [
            ("[Content_Types].xml", content_types.as_bytes()),
            ("_rels/.rels", root_rels.as_bytes()),
            ("word/document.xml", document.as_bytes()),
            ("word/_rels/document.xml.rels", rels.as_bytes()),
            ("word/styles.xml", styles.as_bytes()),
            ("docProps/app.xml", app.as_bytes()),
        ];
        for (name, data) in parts {
            zip.start_file(name, deflate).map_err(zerr)?;
            zip.write_all(data).map_err(|e| EngineError::io("writing the DOCX", e))?;
        }
        for (name, data) in &media {
            zip.start_file(format!("word/media/{name}"), stored).map_err(zerr)?;
            zip.write_all(data).map_err(|e| EngineError::io("writing the DOCX", e))?;
        }
        let mut inner = zip.finish().map_err(zerr)?;
        inner.flush().map_err(|e| EngineError::io("writing the DOCX", e))
    })?;
    control.finish();
    Ok(PdfToDocxResult {
        pages_processed: selected.len() as u32,
        page_count: page_count as u32,
        paragraphs: w.paragraphs,
        images,
        images_skipped: w.images_skipped,
        tables: w.tables,
        pages_without_text: without_text,
        pages_ocred: ocred,
        output_bytes,
    })
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

    fn r(x0: f32, y0: f32, x1: f32, y1: f32) -> mupdf::Rect {
        mupdf::Rect { x0, y0, x1, y1 }
    }

    #[test]
    fn reading_order_reads_columns_before_moving_right_and_margins_last() {
        // Content order: right column first, then a title, then the left column.
        let rects = [
            r(320.0, 100.0, 560.0, 700.0), // right column
            r(50.0, 40.0, 560.0, 70.0),    // title across the page
            r(50.0, 100.0, 290.0, 400.0),  // left column, top
            r(50.0, 420.0, 290.0, 700.0),  // left column, bottom
        ];
        assert_eq!(reading_order(&rects), vec![1, 2, 3, 0]);
        // Line numbers in a right margin come after the text column.
        let rects = [r(580.0, 60.0, 590.0, 760.0), r(60.0, 60.0, 500.0, 760.0)];
        assert_eq!(reading_order(&rects), vec![1, 0]);
        // A two-column index under a title: the columns' paragraph gaps line up (a narrow
        // white band across the page), but only the title's wide gap is cut before the
        // columns, so each column is read whole.
        let rects = [
            r(332.0, 413.0, 466.0, 480.0), // right column, bottom
            r(90.0, 120.0, 294.0, 146.0),  // title
            r(90.0, 177.0, 243.0, 400.0),  // left column, top
            r(332.0, 177.0, 508.0, 405.0), // right column, top
            r(90.0, 417.0, 240.0, 480.0),  // left column, bottom
        ];
        assert_eq!(reading_order(&rects), vec![1, 2, 4, 3, 0]);
        // Blocks that cannot be cut keep MuPDF's order.
        let rects = [r(0.0, 0.0, 100.0, 20.0), r(50.0, 10.0, 150.0, 30.0)];
        assert_eq!(reading_order(&rects), vec![0, 1]);
        // Lines stacked in one column whose boxes touch (one block per line, content order
        // bottom-up) are read top to bottom.
        let rects = [r(72.0, 755.0, 140.0, 770.0), r(72.0, 743.4, 140.0, 758.4), r(72.0, 732.0, 140.0, 747.0)];
        assert_eq!(reading_order(&rects), vec![2, 1, 0]);
    }

    #[test]
    fn reading_order_reads_a_right_margin_column_after_the_page() {
        // A book page (the 352-page book's layout): header, text column, footer, a printer's
        // slug under everything and line numbers in the right margin beside the text. The
        // slug spans below the text and the numbers, so a plain XY-cut reads the numbers
        // before the slug; the margin column rule reads them last.
        let rects = [
            r(3.0, -38.0, 218.0, -31.0),   // 0 header
            r(54.0, 51.0, 348.0, 526.0),   // 1 text column
            r(284.0, 541.0, 347.0, 548.0), // 2 footer
            r(407.0, 51.0, 425.0, 526.0),  // 3 line numbers, right margin
            r(219.0, 611.0, 367.0, 630.0), // 4 slug
        ];
        assert_eq!(reading_order(&rects), vec![0, 1, 2, 4, 3]);
        // Mirrored (line numbers in the left margin): read before the text column, after
        // the header, as the XY-cut does.
        let rects = [
            r(200.0, -38.0, 418.0, -31.0), // 0 header
            r(80.0, 51.0, 374.0, 526.0),   // 1 text column
            r(81.0, 541.0, 144.0, 548.0),  // 2 footer
            r(3.0, 51.0, 21.0, 526.0),     // 3 line numbers, left margin
            r(60.0, 611.0, 208.0, 630.0),  // 4 slug
        ];
        assert_eq!(reading_order(&rects), vec![0, 3, 1, 2, 4]);
        // A narrow block at the right that is short (a marginal note beside one paragraph)
        // is no margin column: it stays in the XY-cut.
        let rects = [
            r(54.0, 51.0, 348.0, 526.0),   // 0 text column
            r(380.0, 100.0, 410.0, 130.0), // 1 note
            r(54.0, 560.0, 348.0, 570.0),  // 2 footer line under the text
        ];
        assert_eq!(reading_order(&rects), vec![0, 1, 2]);
    }

    #[test]
    fn xml_text_is_escaped_and_control_characters_dropped() {
        let mut s = String::new();
        xml_escape(&mut s, "a<b & \"c\"\u{1}>");
        assert_eq!(s, "a&lt;b &amp; &quot;c&quot;&gt;");
    }
}
