//! The searchable PDF's text layer writer on its own, with given Unicode words (the JSON
//! text of non-Latin pages comes from the recogniser; here the words are known): pdftotext
//! reads back exactly the words, in every script, CJK without spaces between its
//! characters and right-to-left text in logical order. No OCR models needed.

use engine::ocr::searchable::{LayerWord, TextLayer};
use mupdf::pdf::PdfDocument;

mod common;

/// Lines of words laid on an A4 page: each line at its own height, its words left to right
/// (right to left for a right-to-left line), box widths proportional to the characters.
fn write(lines: &[(&[&str], bool)], path: &std::path::Path) {
    write_spaced(lines, 9.0, 6.0, path);
}

/// [`write`] with `char_w` points per character and `gap` points between word boxes.
fn write_spaced(lines: &[(&[&str], bool)], char_w: f32, gap: f32, path: &std::path::Path) {
    let mut doc = PdfDocument::new();
    let page =
        doc.new_object_from_str("<< /Type /Page /MediaBox [0 0 595 842] /Resources << >> /Contents [] >>").unwrap();
    let page = doc.add_object(&page).unwrap();
    doc.insert_page(0, &page).unwrap();
    let mut page = doc.find_page(0).unwrap();
    let mut layer = TextLayer::new();
    for (row, (words, rtl)) in lines.iter().enumerate() {
        let top = 800.0 - row as f32 * 30.0;
        let h = 14.0;
        let mut x = if *rtl { 560.0 } else { 40.0 };
        let mut placed = Vec::new();
        for (i, w) in words.iter().enumerate() {
            let width = w.chars().count() as f32 * char_w;
            let (x0, x1) = if *rtl { (x - width, x) } else { (x, x + width) };
            x = if *rtl { x0 - gap } else { x1 + gap };
            placed.push(LayerWord {
                text: w,
                quad: [[x0, top], [x1, top], [x1, top - h], [x0, top - h]],
                space_after: i + 1 < words.len(),
            });
        }
        layer.add_words(&mut doc, &mut page, &placed).unwrap();
    }
    layer.finish().unwrap();
    doc.save(path.to_str().unwrap()).unwrap();
}

fn pdftotext(path: &std::path::Path, raw: bool) -> String {
    let mut c = common::tool("pdftotext");
    if raw {
        c.arg("-raw");
    }
    let out = c.arg(path).arg("-").output().expect("pdftotext (poppler-utils) is installed");
    String::from_utf8(out.stdout).unwrap()
}

/// Non-empty lines, without the bidi embedding marks (U+202A-202E) poppler wraps a
/// right-to-left line in: the characters between them are what must be in logical order.
fn lines_of(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.chars().filter(|c| !('\u{202A}'..='\u{202E}').contains(c)).collect::<String>().trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

const SCRIPTS: &[(&[&str], bool)] = &[
    (&["The", "quick", "brown", "fox"], false),
    (&["Съешь", "же", "ещё", "этих", "мягких", "булок"], false),
    (&["日本語のテキストを検索できます。"], false),
    (&["中文文本可以复制"], false),
    (&["हिन्दी", "पाठ", "खोजा", "जा", "सकता", "है"], false),
    (&["مرحبا", "بالعالم", "العربي"], true),
    (&["שלום", "עולם"], true),
    (&["Ünïcödé", "€", "ﬁ", "𝐀𝐁"], false),
];

#[test]
fn pdftotext_reads_back_every_script_exactly_in_logical_order() {
    let dir = common::Scratch::new("text-layer");
    let path = dir.path("scripts.pdf");
    write(SCRIPTS, &path);
    let expected: Vec<String> = SCRIPTS.iter().map(|(w, _)| w.join(" ")).collect();
    assert_eq!(lines_of(&pdftotext(&path, false)), expected, "pdftotext");
    // -raw keeps content-stream order and breaks a line where x runs backwards, which a
    // right-to-left line does word by word; the left-to-right lines must come back whole.
    let raw = lines_of(&pdftotext(&path, true));
    for (line, (_, rtl)) in expected.iter().zip(SCRIPTS) {
        assert!(*rtl || raw.contains(line), "pdftotext -raw lacks {line:?}: {raw:?}");
    }
}

#[test]
fn the_layer_is_a_glyphless_type0_font_with_identity_h_and_tounicode_and_passes_qpdf() {
    let dir = common::Scratch::new("text-layer-font");
    let path = dir.path("font.pdf");
    write(&SCRIPTS[..3], &path);
    let fonts = String::from_utf8(common::tool("pdffonts").arg(&path).output().unwrap().stdout).unwrap();
    let row = fonts.lines().find(|l| l.contains("GlyphLessFont")).unwrap_or_else(|| panic!("{fonts}"));
    // name, type "CID TrueType", encoding Identity-H, embedded yes, subset no, unicode yes.
    assert!(row.contains("CID TrueType") && row.contains("Identity-H"), "{row}");
    let flags: Vec<&str> = row.split_whitespace().rev().take(5).collect();
    assert_eq!(flags[4..].to_vec(), vec!["yes"], "embedded: {row}");
    assert_eq!(flags[2], "yes", "ToUnicode: {row}");
    assert_eq!(common::qpdf_check(&path, None), 0, "qpdf --check");
}

/// Words whose boxes touch or nearly do, with many code points over a short box (Devanagari
/// and Thai marks) or a lone parenthesis: the space drawn after each is wide enough that
/// `pdftotext -raw`, which skips space glyphs and reads a space only where two words' glyphs
/// are 0.15 font sizes apart, separates them too.
#[test]
fn words_with_touching_boxes_are_read_apart_by_pdftotext_in_both_modes() {
    const TIGHT: &[(&[&str], bool)] = &[
        (&["क्या", "कोंबो", "है", "जब", "प्रदर्शित"], false),
        (&["ตั้ง", "ค่า", "ข้อผิดพลาด"], false),
        (&["(", "ожидалась", "строка", ")"], false),
    ];
    let dir = common::Scratch::new("text-layer-tight");
    let expected: Vec<String> = TIGHT.iter().map(|(w, _)| w.join(" ")).collect();
    for gap in [0.0, 0.5] {
        let path = dir.path(&format!("tight-{gap}.pdf"));
        write_spaced(TIGHT, 4.0, gap, &path);
        assert_eq!(lines_of(&pdftotext(&path, true)), expected, "pdftotext -raw, gap {gap}");
        assert_eq!(lines_of(&pdftotext(&path, false)), expected, "pdftotext, gap {gap}");
    }
}

/// A number inside a right-to-left word keeps its digits' order: the word is drawn in the
/// visual order of the bidirectional algorithm (digits left to right), and pdftotext gives
/// the logical order back (reversed whole, it read `2024` as `4202`). Compared without
/// spaces: poppler's reordering moves a space next to a number run inside a right-to-left
/// line to the run's other side (`ב 2024לתמונת`), whoever wrote the PDF.
#[test]
fn a_number_in_right_to_left_text_reads_back_with_its_digits_in_order() {
    const RTL_NUMBERS: &[(&[&str], bool)] = &[(&["עבור", "ב2024", "לתמונת", "16"], true)];
    let dir = common::Scratch::new("text-layer-rtl-numbers");
    let path = dir.path("numbers.pdf");
    write(RTL_NUMBERS, &path);
    let unspaced: Vec<String> =
        lines_of(&pdftotext(&path, false)).iter().map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(unspaced, vec!["עבורב2024לתמונת16".to_string()]);
}
