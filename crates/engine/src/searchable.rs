//! The invisible text layer of a searchable PDF.
//!
//! The original page is kept byte for byte: its content streams are wrapped in `q` ... `Q`
//! (so a graphics state left changed cannot move our text) and one stream is appended
//! with the recognised words in text render mode 3 (invisible). Each word gets its own
//! text matrix: the baseline runs along the word's box (rotated text stays rotated), the
//! font size is 75% of the box height with the baseline 20% above its bottom, and the
//! horizontal scale makes the word's Helvetica advance exactly the box width, so
//! selecting or searching highlights the word where it is printed. Words other than the
//! last of a line carry a trailing space (drawn past the word's box), so `pdftotext` and
//! copy-paste separate words however tight the spacing.
//!
//! Font: Helvetica (MuPDF's built-in base-14 substitute, embedded once per document),
//! WinAnsi encoding. Characters outside WinAnsi (CJK, Cyrillic, ...) are written as `?`
//! in the text layer; the JSON blocks keep them.

use mupdf::pdf::{PdfDocument, PdfObject};
use mupdf::{Buffer, Font, SimpleFontEncoding};

use crate::error::{MuPdfResultExt, Result};

/// Resource name of the text layer's font.
const FONT_NAME: &str = "OcrTxt";

/// Builds the text layer page by page; the font is added once.
pub(crate) struct TextLayer {
    font: Option<(Font, PdfObject)>,
}

/// WinAnsi (Windows-1252) code of a character, if it has one.
fn win_ansi(c: char) -> Option<u8> {
    let u = c as u32;
    match u {
        0x20..=0x7E | 0xA0..=0xFF => Some(u as u8),
        0x2018 => Some(0x91),
        0x2019 => Some(0x92),
        0x201C => Some(0x93),
        0x201D => Some(0x94),
        0x2022 => Some(0x95),
        0x2013 => Some(0x96),
        0x2014 => Some(0x97),
        0x20AC => Some(0x80),
        0x2026 => Some(0x85),
        _ => None,
    }
}

fn fmt(v: f32) -> String {
    let s = format!("{v:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-" || s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

impl TextLayer {
    pub(crate) fn new() -> Self {
        Self { font: None }
    }

    /// Appends the words of `text` to `page`. `to_user` maps OCR pixel coordinates to the
    /// page's PDF user space.
    pub(crate) fn add_page(
        &mut self,
        doc: &mut PdfDocument,
        page: &mut PdfObject,
        text: &ocr::PageText,
        to_user: &dyn Fn([f32; 2]) -> [f32; 2],
    ) -> Result<()> {
        if self.font.is_none() {
            let font = Font::new("Helvetica").ctx("loading Helvetica")?;
            let obj = doc.add_simple_font(&font, SimpleFontEncoding::Latin).ctx("adding the font")?;
            self.font = Some((font, obj));
        }
        let (font, font_obj) = self.font.as_ref().expect("font set above");
        let mut ops = String::from("BT\n3 Tr\n");
        let mut any = false;
        let words = text.blocks.iter().flat_map(|b| &b.lines).flat_map(|l| {
            let n = l.words.len();
            l.words.iter().enumerate().map(move |(i, w)| (w, i + 1 < n))
        });
        for (word, space_after) in words {
            let mut hex = String::new();
            let mut advance = 0f32;
            for c in word.text.chars() {
                let (code, ch) = match win_ansi(c) {
                    Some(code) => (code, c),
                    None => (b'?', '?'),
                };
                let glyph = font.encode_character(ch as i32).unwrap_or(0);
                advance += font.advance_glyph(glyph).unwrap_or(0.5);
                hex.push_str(&format!("{code:02X}"));
            }
            if hex.is_empty() || advance <= 0.0 {
                continue;
            }
            // A real space after the word (outside its box) so text extraction separates
            // words however close their boxes are.
            if space_after {
                hex.push_str("20");
            }
            let [tl, tr, _br, bl] = word.quad.map(&to_user);
            let (bx, by) = (tr[0] - tl[0], tr[1] - tl[1]);
            let (ux, uy) = (tl[0] - bl[0], tl[1] - bl[1]);
            let width = (bx * bx + by * by).sqrt();
            let height = (ux * ux + uy * uy).sqrt();
            if width <= 0.0 || height <= 0.0 {
                continue;
            }
            let (xh, yh) = ((bx / width, by / width), (ux / height, uy / height));
            let size = 0.75 * height;
            let hscale = width / (advance * size);
            let ox = bl[0] + yh.0 * 0.2 * height;
            let oy = bl[1] + yh.1 * 0.2 * height;
            ops.push_str(&format!(
                "/{FONT_NAME} {} Tf {} {} {} {} {} {} Tm <{hex}> Tj\n",
                fmt(size),
                fmt(xh.0 * hscale),
                fmt(xh.1 * hscale),
                fmt(yh.0),
                fmt(yh.1),
                fmt(ox),
                fmt(oy)
            ));
            any = true;
        }
        ops.push_str("ET\n");
        if !any {
            return Ok(());
        }
        // Resources: make sure the page has its own /Resources with /Font /OcrTxt.
        let res = page.get_dict("Resources").ctx("reading resources")?;
        let mut res = match res {
            Some(r) => r,
            None => {
                let inherited = page.get_dict_inheritable("Resources").ctx("reading resources")?;
                let copy = match inherited {
                    Some(r) => r.copy_dict().ctx("copying resources")?,
                    None => doc.new_dict().ctx("creating resources")?,
                };
                page.dict_put("Resources", copy).ctx("setting resources")?;
                page.get_dict("Resources").ctx("reading resources")?.expect("just set")
            }
        };
        let mut fonts = match res.get_dict("Font").ctx("reading fonts")? {
            Some(f) => f,
            None => {
                res.dict_put("Font", doc.new_dict().ctx("creating a font dict")?).ctx("setting fonts")?;
                res.get_dict("Font").ctx("reading fonts")?.expect("just set")
            }
        };
        fonts.dict_put(FONT_NAME, doc.new_indirect(font_obj.as_indirect().ctx("font reference")?, 0).ctx("font reference")?).ctx("adding the font resource")?;

        // Contents: [q, original..., Q + text].
        let open = doc.add_stream(&Buffer::from_bytes(b"q\n").ctx("buffer")?, None, false).ctx("adding a stream")?;
        let close_text = format!("Q\n{ops}");
        let close = doc
            .add_stream(&Buffer::from_bytes(close_text.as_bytes()).ctx("buffer")?, None, false)
            .ctx("adding a stream")?;
        let mut contents = doc.new_array().ctx("creating contents")?;
        contents.array_push(open).ctx("contents")?;
        if let Some(old) = page.get_dict("Contents").ctx("reading contents")? {
            if old.is_array().unwrap_or(false) {
                for i in 0..old.len().unwrap_or(0) {
                    if let Some(item) = old.get_array(i as i32).ctx("contents")? {
                        contents.array_push(item).ctx("contents")?;
                    }
                }
            } else {
                contents.array_push(old).ctx("contents")?;
            }
        }
        contents.array_push(close).ctx("contents")?;
        page.dict_put("Contents", contents).ctx("setting contents")?;
        Ok(())
    }
}

