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
//!   with [`PdfToDocxOptions::ocr`] they are OCRed: the recognised lines become
//!   paragraphs and replace the page-sized scan picture (smaller pictures are kept).
//! - Text whose codes do not give its letters (glyphs without a usable Unicode mapping, a
//!   custom encoding read as symbols): pages where enough of it is listed in
//!   `pages_unmapped_text`; with [`PdfToDocxOptions::ocr`] each such line takes the words OCR
//!   reads inside its box where they differ from its text layer ([`unmapped`]).
//! - Password-protected PDFs fail with `encrypted_input` (run `unlock` first).

//!
//! # Layout of this module
//!
//! [`pdf_to_docx`] runs the pages; `extract` reads what a page holds (as `items`), `reading_order` puts
//! its blocks in order, `package` writes WordprocessingML and zips the package.

use std::path::Path;

mod extract;
mod fields;
mod items;
mod package;
mod reading_order;
pub mod tables;
mod unmapped;

use serde::{Deserialize, Serialize};

use crate::control::JobControl;
use crate::error::{MuPdfResultExt, Result};
use crate::pdf::content::repair_page_contents;
use crate::pdf::mcid::untag_costly_pages;
use crate::pdf::open::{open_pdf, PasswordPolicy, Source};
use crate::pdf::pages::selected_or_all;
use items::{Item, Line, Run, Style};
use package::Writer;
use reading_order::reading_order;

/// Margins of the Word pages, in points (0.5 in).
const MARGIN_PT: f64 = 36.0;

/// Options of [`pdf_to_docx`].
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PdfToDocxOptions {
    /// 0-based pages to convert; `None` or empty = all.
    pub pages: Option<Vec<i64>>,
    /// Refuse inputs with more pages than this.
    pub max_pages: Option<u32>,
    /// OCR pages without text with the engine's OCR ([`crate::ocr::pipeline::ocr_page`],
    /// which needs [`crate::ocr::pipeline::ocr_init`]), and check against it the pages whose
    /// text looks unmapped ([`unmapped`]); `false` = keep their images and their text layer.
    pub ocr: bool,
}

/// What [`pdf_to_docx`] produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
    /// [`crate::ocr::pipeline::TEXT_PAGE_MIN_CHARS`] non-blank characters, the OCR rule).
    pub pages_without_text: Vec<u32>,
    /// Those of them that were OCRed (all of them when [`PdfToDocxOptions::ocr`] is set).
    pub pages_ocred: Vec<u32>,
    /// 0-based indexes of converted pages with a text layer of which enough looks unmapped
    /// (glyphs without a usable Unicode mapping, lines of symbols: [`unmapped`]) to check it
    /// against OCR; checked when [`PdfToDocxOptions::ocr`] is set.
    pub pages_unmapped_text: Vec<u32>,
    /// Lines of those pages whose text the recognised words replaced.
    pub lines_recognised: u32,
    /// Bytes written.
    pub output_bytes: u64,
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
    // Only read: pages MuPDF would take hours to run stay untagged.
    drop(untag_costly_pages(&opened.doc));
    let page_count = opened.page_count();
    let selected: Vec<usize> = selected_or_all(options.pages.as_deref(), page_count)?.into_iter().collect();
    let scratch = JobControl::new();
    repair_page_contents(selected.iter().map(|&i| (i + 1, &opened.pages[i])), &scratch)?;
    control.start(selected.len() as u64)?;

    let first = opened.doc.load_page(selected[0] as i32).ctx("loading the page")?;
    let fb = first.bounds().ctx("measuring the page")?;
    // Word accepts page sides of 1 to 22 inches; larger pages (posters, the "enormous page"
    // of the corpus) are clamped, and pictures scale down to the text width.
    let clamp = |v: f32| (v as f64).clamp(72.0, 1584.0);
    let (page_w, page_h) = (clamp(fb.x1 - fb.x0), clamp(fb.y1 - fb.y0));
    let mut w = Writer::new((page_w - 2.0 * MARGIN_PT).max(72.0));
    let mut without_text = Vec::new();
    let mut ocred = Vec::new();
    let mut unmapped_pages = Vec::new();
    let mut lines_recognised = 0;
    for (k, &index) in selected.iter().enumerate() {
        control.checkpoint()?;
        if k > 0 {
            w.page_break();
        }
        let page = opened.doc.load_pdf_page(index as i32).ctx("loading the page")?;
        let bounds = page.bounds().ctx("measuring the page")?;
        let (mut items, has_text) = extract::page_items(&page, bounds)?;
        let mut ocr_rotated = Vec::new();
        let mut ocr_blocks = false;
        if !has_text {
            without_text.push(index as u32);
            if options.ocr {
                let read = crate::ocr::pipeline::ocr_page(&opened.doc, index)?;
                control.checkpoint()?;
                ocred.push(index as u32);
                ocr_blocks = read.text_rotation == 0;
                ocr_rotated = extract::replace_with_ocr(&mut items, &read, bounds);
            }
        } else if unmapped::page_is_suspect(&mut items) {
            unmapped_pages.push(index as u32);
            if options.ocr {
                let read = crate::ocr::pipeline::ocr_page(&opened.doc, index)?;
                control.checkpoint()?;
                // Turned text: the recognised boxes are not the text layer's.
                if read.text_rotation == 0 {
                    lines_recognised += unmapped::recognise_lines(&mut items, &read, bounds) as u32;
                }
            }
        }
        extract::drop_empty_lines(&mut items);
        write_items(&mut w, items, bounds, ocr_blocks);
        for para in ocr_rotated {
            w.plain_paragraph(&para);
        }
        control.advance()?;
    }

    let (paragraphs, images_skipped, tables) = (w.paragraphs, w.images_skipped, w.tables);
    let (images, output_bytes) = w.finish(output, control, (page_w, page_h), MARGIN_PT, selected.len())?;
    control.finish();
    Ok(PdfToDocxResult {
        pages_processed: selected.len() as u32,
        page_count: page_count as u32,
        paragraphs,
        images,
        images_skipped,
        tables,
        pages_without_text: without_text,
        pages_ocred: ocred,
        pages_unmapped_text: unmapped_pages,
        lines_recognised,
        output_bytes,
    })
}

/// Writes a page's items in reading order. With `ocr_blocks`, the text items are the OCR's
/// blocks, pushed in the OCR's reading order (that of the JSON and of the searchable PDF's text
/// layer, crates/ocr/src/layout.rs): they keep it, and this order only places the pictures kept.
fn write_items(w: &mut Writer, items: Vec<(mupdf::Rect, Item)>, bounds: mupdf::Rect, ocr_blocks: bool) {
    let rects: Vec<mupdf::Rect> = items.iter().map(|(r, _)| *r).collect();
    let mut items: Vec<Option<Item>> = items.into_iter().map(|(_, i)| Some(i)).collect();
    let mut order = reading_order(&rects);
    if ocr_blocks {
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
            Some(Item::Text(lines)) => package::emit_text(w, &lines, bounds),
            Some(Item::Table(widths, rows)) => w.table(&widths, &rows),
            None => {}
        }
    }
}
