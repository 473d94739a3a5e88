//! The text-and-vector half of compress: embedded fonts subset to the glyphs used,
//! at every level, without losing a word (pdftotext, an independent reader) or a
//! rendered pixel at light; and the levels ordered: strong <= balanced <= light <= input.

mod common;

use std::collections::HashMap;
use std::path::Path;

use common::{compress_at, corpus_file, finish_page, Scratch};
use engine::pagework::compress::CompressLevel;
use mupdf::pdf::{PdfDocument, PdfObject};
use mupdf::{Colorspace, Document, Font, Matrix, Size};

/// pdftotext's words of `path` with their counts.
fn words(path: &Path) -> HashMap<String, usize> {
    let out = common::tool("pdftotext").arg(path).arg("-").output().expect("pdftotext (poppler-utils)");
    let mut m = HashMap::new();
    for w in String::from_utf8_lossy(&out.stdout).split_whitespace() {
        *m.entry(w.to_owned()).or_insert(0) += 1;
    }
    m
}

/// The grey pixels of every page of `path` at 72 dpi.
fn pixels(path: &Path) -> Vec<Vec<u8>> {
    let doc = Document::open(path.to_str().unwrap()).unwrap();
    (0..doc.page_count().unwrap())
        .map(|i| {
            let page = doc.load_page(i).unwrap();
            let pm = page.to_pixmap(&Matrix::IDENTITY, &Colorspace::device_gray(), false, false).unwrap();
            pm.samples().to_vec()
        })
        .collect()
}

/// The total stored bytes of the embedded font programs of `path`.
fn font_program_bytes(path: &Path) -> usize {
    let doc = PdfDocument::open(path.to_str().unwrap()).unwrap();
    let mut total = 0;
    for i in 0..doc.page_count().unwrap() {
        let page = doc.find_page(i).unwrap();
        let Some(fonts) = page.get_dict_inheritable("Resources").unwrap().and_then(|r| r.get_dict("Font").unwrap())
        else {
            continue;
        };
        for entry in fonts.dict_iter().unwrap() {
            let (_, font) = entry.unwrap();
            let Some(font) = font.resolve().unwrap() else { continue };
            let desc_font = match font.get_dict("DescendantFonts").unwrap() {
                Some(d) => {
                    let first = d.resolve().unwrap().and_then(|a| a.get_array(0).unwrap());
                    let Some(first) = first.and_then(|f| f.resolve().unwrap()) else { continue };
                    first
                }
                None => font,
            };
            let Some(desc) = desc_font.get_dict("FontDescriptor").unwrap() else { continue };
            for key in ["FontFile", "FontFile2", "FontFile3"] {
                if let Some(f) = desc.get_dict(key).unwrap() {
                    total += f.read_raw_stream().unwrap().len();
                }
            }
        }
    }
    total
}

/// DejaVu Sans (fonts-dejavu, installed by scripts/setup.sh): a 700 KB TrueType program.
const TRUETYPE: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

/// A one-page PDF drawing `text` in DejaVu Sans, the whole TrueType program embedded
/// as a CID font (Identity-H: glyph ids in the content), as LibreOffice and browsers
/// embed fonts when they do not subset.
fn pdf_with_embedded_font(path: &Path, text: &str) {
    let mut doc = PdfDocument::new();
    let font =
        Font::from_bytes("DejaVuSans", &std::fs::read(TRUETYPE).expect("fonts-dejavu (scripts/setup.sh)")).unwrap();
    let font_ref = doc.add_font(&font).unwrap();
    let mut hex = String::new();
    for c in text.chars() {
        let gid = font.encode_character(c as i32).unwrap();
        hex.push_str(&format!("{gid:04X}"));
    }
    let content = format!("BT /F1 24 Tf 72 700 Td <{hex}> Tj ET");
    let page = doc.new_page(Size::A4).unwrap();
    let mut page_obj: PdfObject = page.object();
    let mut fonts = doc.new_dict().unwrap();
    fonts.dict_put("F1", font_ref).unwrap();
    finish_page(&mut doc, &mut page_obj, fonts, &content, path);
}

#[test]
fn embedded_fonts_are_subset_to_the_glyphs_used_at_every_level_keeping_text_and_pixels() {
    let s = Scratch::new("compress-subset");
    let input = s.path("font.pdf");
    pdf_with_embedded_font(&input, "Subset fonts keep their glyphs");
    let before_font = font_program_bytes(&input);
    let before_words = words(&input);
    assert!(before_words.contains_key("glyphs"), "the test PDF has its text: {before_words:?}");
    let before_pixels = pixels(&input);
    for level in [CompressLevel::Light, CompressLevel::Balanced, CompressLevel::Strong] {
        let out = s.path("out.pdf");
        compress_at(&input, &out, level);
        let after_font = font_program_bytes(&out);
        assert!(
            after_font * 20 < before_font,
            "{level:?}: font program {before_font} -> {after_font} bytes (not subset)"
        );
        assert_eq!(words(&out), before_words, "{level:?}: pdftotext's words");
        if level == CompressLevel::Light {
            assert!(pixels(&out) == before_pixels, "light changed a rendered pixel");
        }
    }
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn fonts_of_a_born_digital_corpus_file_are_subset_without_losing_a_word() {
    // chinese-template.pdf embeds whole TrueType programs.
    let input = corpus_file("chinese-template.pdf");
    let s = Scratch::new("compress-subset-corpus");
    let out = s.path("out.pdf");
    compress_at(&input, &out, CompressLevel::Light);
    let (before, after) = (font_program_bytes(&input), font_program_bytes(&out));
    assert!(after * 2 < before, "font programs {before} -> {after} bytes");
    assert_eq!(words(&out), words(&input));
    assert!(pixels(&out) == pixels(&input), "light changed a rendered pixel");
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn levels_are_ordered_strong_le_balanced_le_light_le_input_on_corpus_files() {
    // Born-digital (fonts), scanned, vector and image-heavy files; small enough for the suite.
    let names = [
        "chinese-template.pdf",
        "japanese-tex-dvipdfmx.pdf",
        "arabic-rotated-pages.pdf",
        "google-docs-export.pdf",
        "acroform-printed-wikipedia.pdf",
        "pdfa-crazyones.pdf",
        "latex-multicolumn.pdf",
        "scanned-mixed-3-pages.pdf",
        "chart-slanted-text.pdf",
    ];
    let s = Scratch::new("compress-order");
    for name in names {
        let input = corpus_file(name);
        let in_bytes = std::fs::metadata(&input).unwrap().len();
        let in_words = words(&input);
        let mut sizes = Vec::new();
        for level in [CompressLevel::Light, CompressLevel::Balanced, CompressLevel::Strong] {
            let out = s.path(&format!("{level:?}.pdf"));
            sizes.push(compress_at(&input, &out, level));
            let after = words(&out);
            let lost: Vec<_> = in_words.iter().filter(|(w, n)| after.get(*w).copied().unwrap_or(0) < **n).collect();
            assert!(lost.is_empty(), "{name} {level:?} lost words: {lost:?}");
        }
        let [light, balanced, strong] = sizes[..] else { unreachable!() };
        assert!(light <= in_bytes, "{name}: light {light} > input {in_bytes}");
        assert!(balanced <= light, "{name}: balanced {balanced} > light {light}");
        assert!(strong <= balanced, "{name}: strong {strong} > balanced {balanced}");
    }
}
