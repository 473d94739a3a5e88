//! The invisible text layer of a searchable PDF, in Unicode.
//!
//! The original page is kept byte for byte: its content streams are wrapped in `q` ... `Q`
//! (so a graphics state left changed cannot move our text) and one stream is appended
//! with the recognised words in text render mode 3 (invisible), one `Tj` per word. (A page
//! drawn straight by [`crate::ocr::turn`] has its streams wrapped once more, inside these.)
//!
//! Font: the technique of Tesseract's PDF renderer and OCRmyPDF: a glyph-less Type0 font
//! (`Identity-H` encoding over a `CIDFontType2` whose every CID has the same advance,
//! [`CID_ADVANCE`]) and a `ToUnicode` map, so any script is searchable and copyable
//! (WinAnsi, used before, wrote `?` for CJK, Cyrillic, Arabic...). Each distinct character
//! of the document gets its own CID (1, 2, ...; 0 is `.notdef`), and the `ToUnicode` map
//! written by [`TextLayer::finish`] sends it back to that character (UTF-16, so characters
//! beyond the BMP survive too). The font program embedded is [`glyphless_ttf`]: two empty
//! glyphs, nothing to draw.
//!
//! Placement: each word gets its own text matrix: the baseline runs along the word's box
//! (rotated text stays rotated), the font size is the box height with the baseline 20%
//! above its bottom (the font's ascent is 0.8 em and its descent 0.2 em, so each glyph's box
//! is the word's box), and a horizontal scale makes the word's advance (characters x
//! [`CID_ADVANCE`]) exactly the box width, so selecting or searching highlights the word
//! where it is printed, and a CJK line (one "word" without spaces) has evenly spread
//! characters that extraction does not split with spaces. Words other than the last of a
//! line carry a space after them in logical order (a glyph of its own, at least
//! [`MIN_SPACE`] font sizes wide, at the end of the span from the word to the next one), so
//! `pdftotext` and copy-paste separate words however tight the spacing.
//!
//! Reading order: `pdftotext` (poppler's TextOutputDev) rebuilds lines, blocks and their
//! order from the glyphs' geometry, so the layer is laid out for its rules to give back the
//! JSON's order: all lines of a block share one font size, raised so that the block's widest
//! row gap stays within 1.5 font sizes (one poppler block; pieces of two columns aligned at
//! their tops were read as a table, row by row) but kept clear of the lines beside it
//! ([`block_font_sizes`]); lines of one row (a receipt's item and its price) share a baseline
//! and are joined like the words of a line ([`rows`]); the lines of a block on a skewed scan
//! are drawn as if the block were turned upright, so columns keep their gutter in the upright
//! boxes pdftotext draws ([`upright_blocks`]). `tests/text_layer_corpus.rs` measures the
//! remaining difference over the corpus scans.
//!
//! Right-to-left words (Arabic, Hebrew...) are drawn in visual order ([`visual_order`]: their
//! letters reversed, numbers left to right; the separating space on their left), as a PDF
//! made from such text draws them; extraction tools detect the right-to-left run and give
//! back the logical order the JSON has (`pdftotext` in its default mode, wrapping runs in
//! bidi embedding marks U+202A-U+202C; `pdftotext -raw` instead ends a line wherever the
//! next word in the content stream lies to the left, so it reads a right-to-left line one
//! word per line).

use std::collections::HashMap;

use mupdf::pdf::{PdfDocument, PdfObject};
use mupdf::Buffer;

use crate::error::{MuPdfResultExt, Result};
use crate::ocr::glyphless_font::to_unicode_cmap;
pub use crate::ocr::glyphless_font::{glyphless_ttf, CID_ADVANCE};

mod line_frames;
mod rtl;

pub use line_frames::STRAIGHTEN_BELOW_DEGREES;
use line_frames::{block_font_sizes, line_frame, rows, upright_blocks, LineFrame};
pub use rtl::is_rtl_char;
use rtl::{is_rtl_word, visual_order};

/// Resource name of the text layer's font.
const FONT_NAME: &str = "OcrTxt";

/// Least width of the space after a word, in font sizes: over the 0.15 under which
/// `pdftotext -raw` joins two words (TextOutputDev's `minWordSpacing`).
pub const MIN_SPACE: f32 = 0.25;

/// Width of the space after a word followed by a wide gap, in font sizes.
const NARROW_SPACE: f32 = 0.3;

/// One positioned word for [`TextLayer::add_words`]: its text in logical order and the
/// corners of its box in PDF user space (top-left, top-right, bottom-right, bottom-left of
/// the upright word).
#[derive(Debug, Clone)]
pub struct LayerWord<'a> {
    /// Text, logical order.
    pub text: &'a str,
    /// Corners in user space, reading direction.
    pub quad: [[f32; 2]; 4],
    /// Whether a space follows the word (every word of a line but the last).
    pub space_after: bool,
}

/// Builds the text layer page by page; the font is added once and its `ToUnicode` map is
/// written by [`finish`](Self::finish).
pub struct TextLayer {
    font: Option<Fonts>,
    cids: HashMap<char, u16>,
    chars: Vec<char>,
}

struct Fonts {
    type0: PdfObject,
    to_unicode: PdfObject,
    cid_to_gid: PdfObject,
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

impl Default for TextLayer {
    fn default() -> Self {
        Self::new()
    }
}

impl TextLayer {
    /// An empty layer.
    pub fn new() -> Self {
        Self { font: None, cids: HashMap::new(), chars: Vec::new() }
    }

    fn cid(&mut self, c: char) -> Option<u16> {
        if let Some(&id) = self.cids.get(&c) {
            return Some(id);
        }
        // CIDs 1..=65535 (0 is .notdef); a page of more distinct characters is unheard of.
        let id = u16::try_from(self.chars.len() + 1).ok()?;
        self.cids.insert(c, id);
        self.chars.push(c);
        Some(id)
    }

    fn fonts(&mut self, doc: &mut PdfDocument) -> Result<PdfObject> {
        if let Some(f) = &self.font {
            return doc.new_indirect(f.type0.as_indirect().ctx("font reference")?, 0).ctx("font reference");
        }
        let ttf = glyphless_ttf();
        let mut font_file =
            doc.add_stream(&Buffer::from_bytes(&ttf).ctx("buffer")?, None, false).ctx("adding the font program")?;
        let ttf_len = ttf.len();
        font_file.dict_put("Length1", doc.new_int(ttf_len as i32).ctx("font length")?).ctx("font length")?;
        let descriptor = doc
            .new_object_from_str(&format!(
                "<< /Type /FontDescriptor /FontName /GlyphLessFont /Flags 5 /FontBBox [0 -200 {adv} 800] \
                 /ItalicAngle 0 /Ascent 800 /Descent -200 /CapHeight 800 /StemV 80 /FontFile2 {} 0 R >>",
                font_file.as_indirect().ctx("font file")?,
                adv = CID_ADVANCE as i32
            ))
            .ctx("font descriptor")?;
        let descriptor = doc.add_object(&descriptor).ctx("font descriptor")?;
        // Filled by finish(): every CID used maps to the font's one empty glyph, none to
        // .notdef (which PDF/A forbids showing, even invisibly).
        let cid_to_gid = doc.add_stream(&Buffer::from_bytes(b"").ctx("buffer")?, None, false).ctx("CIDToGIDMap")?;
        let cid_font = doc
            .new_object_from_str(&format!(
                "<< /Type /Font /Subtype /CIDFontType2 /BaseFont /GlyphLessFont \
                 /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> \
                 /FontDescriptor {} 0 R /DW {} /CIDToGIDMap {} 0 R >>",
                descriptor.as_indirect().ctx("descriptor")?,
                CID_ADVANCE as i32,
                cid_to_gid.as_indirect().ctx("CIDToGIDMap")?
            ))
            .ctx("CID font")?;
        let cid_font = doc.add_object(&cid_font).ctx("CID font")?;
        // Filled by finish() once every character of the document is known.
        let to_unicode = doc.add_stream(&Buffer::from_bytes(b"").ctx("buffer")?, None, false).ctx("ToUnicode")?;
        let type0 = doc
            .new_object_from_str(&format!(
                "<< /Type /Font /Subtype /Type0 /BaseFont /GlyphLessFont /Encoding /Identity-H \
                 /DescendantFonts [{} 0 R] /ToUnicode {} 0 R >>",
                cid_font.as_indirect().ctx("CID font")?,
                to_unicode.as_indirect().ctx("ToUnicode")?
            ))
            .ctx("Type0 font")?;
        let type0 = doc.add_object(&type0).ctx("Type0 font")?;
        let reference = doc.new_indirect(type0.as_indirect().ctx("font reference")?, 0).ctx("font reference")?;
        self.font = Some(Fonts { type0, to_unicode, cid_to_gid });
        Ok(reference)
    }

    /// Appends the words of an OCR result to `page`. `to_user` maps OCR pixel coordinates to
    /// the page's PDF user space.
    ///
    /// The words are laid out so that text extraction (`pdftotext`, copy and paste) reads
    /// the lines in the JSON's order: extractors rebuild lines and blocks from the glyphs'
    /// geometry, not from the content stream's order, and `pdftotext` only joins lines into
    /// one block when their font sizes differ by under 5% and their baselines are less than
    /// 1.5 font sizes apart. So, as Tesseract's renderer does, every word of a line sits on
    /// the line's baseline ([`line_frame`]) and every line of a block has the block's font
    /// size (from its median line height); with a size per word box each line would be a
    /// block of its own and `pdftotext` would interleave the columns of a two-column scan.
    pub(crate) fn add_page(
        &mut self,
        doc: &mut PdfDocument,
        page: &mut PdfObject,
        text: &ocr::PageText,
        to_user: &dyn Fn([f32; 2]) -> [f32; 2],
    ) -> Result<()> {
        let mut words: Vec<LayerWord> = Vec::new();
        let mut frames: Vec<Vec<Option<LineFrame>>> =
            text.blocks.iter().map(|b| b.lines.iter().map(|l| line_frame(l.quad.map(to_user))).collect()).collect();
        upright_blocks(&mut frames);
        let sizes = block_font_sizes(&frames);
        for ((block, frames), block_height) in text.blocks.iter().zip(&frames).zip(sizes) {
            let (frames, joined) = rows(frames);
            for ((line, frame), joined) in block.lines.iter().zip(&frames).zip(joined) {
                let Some(f) = frame else { continue };
                let n = line.words.len();
                for (i, w) in line.words.iter().enumerate() {
                    let q = w.quad.map(to_user);
                    // The word's extent along the line's baseline.
                    let along = |p: [f32; 2]| (p[0] - f.origin[0]) * f.dir[0] + (p[1] - f.origin[1]) * f.dir[1];
                    let a = along(q[0]).min(along(q[3]));
                    let b = along(q[1]).max(along(q[2]));
                    if !(b > a) {
                        continue;
                    }
                    words.push(LayerWord {
                        text: &w.text,
                        quad: f.word_quad(a, b, block_height),
                        space_after: i + 1 < n || joined,
                    });
                }
            }
        }
        self.add_words(doc, page, &words)
    }

    /// Appends positioned words (in reading order) to `page` as invisible text.
    pub fn add_words(&mut self, doc: &mut PdfDocument, page: &mut PdfObject, words: &[LayerWord]) -> Result<()> {
        let mut ops = String::from("BT\n3 Tr\n");
        let mut any = false;
        let em = CID_ADVANCE / 1000.0;
        for (index, word) in words.iter().enumerate() {
            let rtl = is_rtl_word(word.text);
            let mut chars: Vec<char> = word.text.chars().filter(|c| !c.is_control()).collect();
            if chars.is_empty() {
                continue;
            }
            if rtl {
                chars = visual_order(&chars);
            }
            let n = chars.len() as f32;
            let hex: String = chars.iter().map(|&c| format!("{:04X}", self.cid(c).unwrap_or(0))).collect();
            let [tl, tr, _br, bl] = word.quad;
            let (bx, by) = (tr[0] - tl[0], tr[1] - tl[1]);
            let (ux, uy) = (tl[0] - bl[0], tl[1] - bl[1]);
            let width = (bx * bx + by * by).sqrt();
            let height = (ux * ux + uy * uy).sqrt();
            if !(width > 0.0 && height > 0.0) {
                continue;
            }
            let (xh, yh) = ((bx / width, by / width), (ux / height, uy / height));
            // The font size is the box height (ascent 0.8 + descent 0.2 em). A smaller size
            // (75% of it, under the line pitch / 1.5 that pdftotext allows between the lines
            // of one block) makes pdftotext cut columns into pieces and read them out of order.
            let size = height;
            let hscale = width / (n * em * size);
            let origin = (bl[0] + yh.0 * 0.2 * height, bl[1] + yh.1 * 0.2 * height);
            let show = |ops: &mut String, hex: &str, hscale: f32, at: (f32, f32)| {
                ops.push_str(&format!(
                    "/{FONT_NAME} {} Tf {} {} {} {} {} {} Tm <{hex}> Tj\n",
                    fmt(size),
                    fmt(xh.0 * hscale),
                    fmt(xh.1 * hscale),
                    fmt(yh.0),
                    fmt(yh.1),
                    fmt(at.0),
                    fmt(at.1)
                ));
            };
            // A real space after the word in logical order, so text extraction separates
            // words however close their boxes are: on the right of a left-to-right word, on
            // the left of a right-to-left one. As Tesseract's renderer does, the word and its
            // space are stretched together to reach the next word of the line: pdftotext
            // reads a gap wider than about a character as a column break and cuts the line
            // there (a wide capital whose box starts late did, on a generated German page;
            // a space glyph filling the gap does not help, pdftotext measures words without
            // their spaces).
            let gap = if word.space_after {
                words.get(index + 1).map_or(0.0, |next| {
                    let [ntl, ntr, _, _] = next.quad;
                    // Along this word's baseline: from its end to the next word's start.
                    let (from, to) = if rtl { (ntr, tl) } else { (tr, ntl) };
                    ((to[0] - from[0]) * xh.0 + (to[1] - from[1]) * xh.1).max(0.0)
                })
            } else {
                0.0
            };
            if !word.space_after {
                show(&mut ops, &hex, hscale, origin);
                any = true;
                continue;
            }
            let space = format!("{:04X}", self.cid(' ').unwrap_or(0));
            // The word and its space share the box and the gap to the next word (the span);
            // the space is drawn as a glyph of its own at the span's end (on the left of a
            // right-to-left word). Its width: a character's share of the span, but at least
            // [`MIN_SPACE`] font sizes (pdftotext -raw reads a space only where the glyphs of
            // two words are 0.15 font sizes apart: it skips space glyphs and measures the
            // words; Devanagari and Thai words, many code points over a short box, and a
            // lone parenthesis had shares under that and ran into the next word), and only
            // [`NARROW_SPACE`] where the share is over half a font size (a row's item and
            // its price: a space as wide as a wide character leaves a gap that pdftotext
            // takes for a column gutter, over 0.7 font sizes). The word is squeezed or
            // stretched over the rest of the span (at least 30% of it).
            let span = width + gap;
            let share = span / (n + 1.0);
            let space_width =
                if share > 0.5 * size { NARROW_SPACE * size } else { share.max(MIN_SPACE * size) }.min(0.7 * span);
            let word_scale = (span - space_width) / (n * em * size);
            let space_scale = space_width / (em * size);
            if rtl {
                // The span runs from the box's right edge leftwards to the next word.
                let word_at = (origin.0 - xh.0 * (gap - space_width), origin.1 - xh.1 * (gap - space_width));
                show(&mut ops, &hex, word_scale, word_at);
                show(&mut ops, &space, space_scale, (origin.0 - xh.0 * gap, origin.1 - xh.1 * gap));
            } else {
                show(&mut ops, &hex, word_scale, origin);
                let end = span - space_width;
                show(&mut ops, &space, space_scale, (origin.0 + xh.0 * end, origin.1 + xh.1 * end));
            }
            any = true;
        }
        ops.push_str("ET\n");
        if !any {
            return Ok(());
        }
        let font_ref = self.fonts(doc)?;
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
        fonts.dict_put(FONT_NAME, font_ref).ctx("adding the font resource")?;

        // Contents: [q, original..., Q + text].
        wrap_contents(doc, page, b"q\n", format!("Q\n{ops}").as_bytes())
    }

    /// Writes the `ToUnicode` map of every character used. Call once, before saving.
    pub fn finish(&mut self) -> Result<()> {
        let Some(fonts) = self.font.as_mut() else { return Ok(()) };
        let cmap = to_unicode_cmap(&self.chars);
        fonts.to_unicode.write_stream_string(&cmap).ctx("writing ToUnicode")?;
        // Two bytes per CID from 0: CID 0 to glyph 0, every CID in use to glyph 1.
        let mut map = vec![0u8, 0];
        for _ in &self.chars {
            map.extend_from_slice(&1u16.to_be_bytes());
        }
        fonts.cid_to_gid.write_stream_buffer(&Buffer::from_bytes(&map).ctx("buffer")?).ctx("writing CIDToGIDMap")?;
        Ok(())
    }
}

/// Puts a stream holding `open` before the page's content streams and one holding `close`
/// after them (`Contents` becomes an array; the original streams are kept as they are).
pub(crate) fn wrap_contents(doc: &mut PdfDocument, page: &mut PdfObject, open: &[u8], close: &[u8]) -> Result<()> {
    let open = doc.add_stream(&Buffer::from_bytes(open).ctx("buffer")?, None, false).ctx("adding a stream")?;
    let close = doc.add_stream(&Buffer::from_bytes(close).ctx("buffer")?, None, false).ctx("adding a stream")?;
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
    page.dict_put("Contents", contents).ctx("setting contents")
}
