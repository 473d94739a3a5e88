//! pdf -> docx over corpus PDFs: scanned pages OCRed into editable paragraphs, tables as
//! Word tables, form field values, reading order.
use std::io::Read;
use std::path::Path;

use engine::convert::docx::{pdf_to_docx, PdfToDocxOptions};
use engine::JobControl;

mod common;
use common::{corpus_dir, init_ocr};

fn document_xml(path: &Path) -> String {
    let mut zip = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut xml = String::new();
    zip.by_name("word/document.xml").unwrap().read_to_string(&mut xml).unwrap();
    xml
}

/// Text of the `<w:t>` elements, space-separated.
fn text_of(xml: &str) -> String {
    let mut out = String::new();
    for part in xml.split("<w:t xml:space=\"preserve\">").skip(1) {
        out.push_str(part.split("</w:t>").next().unwrap());
        out.push(' ');
    }
    out
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
#[cfg_attr(all(has_corpus, not(has_ocr_models)), ignore = "OCR models missing: run scripts/setup.sh")]
fn docx_scanned_page_is_ocred_into_editable_paragraphs() {
    let corpus = corpus_dir();
    init_ocr();
    let out = std::env::temp_dir().join(format!("docx-ocr-{}.docx", std::process::id()));
    let input = corpus.join("files/scanned-huckfinn-page.pdf");
    // Without OCR: the page is listed, no text.
    let r = pdf_to_docx(&input, &out, &PdfToDocxOptions::default(), &JobControl::new()).unwrap();
    assert_eq!(r.pages_without_text, vec![0]);
    assert!(r.pages_ocred.is_empty());
    assert!(text_of(&document_xml(&out)).trim().is_empty());
    // With OCR: paragraphs of recognised words in reading order, the scan picture replaced.
    let opts = PdfToDocxOptions { ocr: true, ..Default::default() };
    let r = pdf_to_docx(&input, &out, &opts, &JobControl::new()).unwrap();
    assert_eq!(r.pages_without_text, vec![0]);
    assert_eq!(r.pages_ocred, vec![0]);
    assert_eq!(r.pages_processed, 1);
    assert!(r.paragraphs >= 1, "{r:?}");
    assert_eq!(r.images, 0, "the page-sized scan is replaced by its text");
    let text = text_of(&document_xml(&out)).to_lowercase();
    eprintln!("{text}");
    let words: Vec<&str> = text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    assert!(words.len() > 100, "{} words", words.len());
    // Real words of the page, in reading order.
    let mut at = 0;
    for w in ["widow", "garden", "kitchen", "jim", "listened", "scratch"] {
        let found = words[at..].iter().position(|x| *x == w);
        assert!(found.is_some(), "{w} missing or out of order");
        at += found.unwrap() + 1;
    }
    let _ = std::fs::remove_file(&out);
}

fn count(xml: &str, what: &str) -> usize {
    xml.matches(what).count()
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn docx_tables_become_word_tables_and_multicolumn_prose_stays_paragraphs() {
    let corpus = corpus_dir();
    let out = std::env::temp_dir().join(format!("docx-tables-{}.docx", std::process::id()));
    // google-docs-export: a table of countries (5 rows; "Europe" spans two columns, which
    // merges them: 5 columns).
    let r = pdf_to_docx(
        &corpus.join("files/google-docs-export.pdf"),
        &out,
        &PdfToDocxOptions::default(),
        &JobControl::new(),
    )
    .unwrap();
    assert_eq!(r.tables, 1, "{r:?}");
    let xml = document_xml(&out);
    let table = &xml[xml.find("<w:tbl>").unwrap()..xml.find("</w:tbl>").unwrap()];
    assert_eq!(count(table, "<w:tr>"), 5);
    assert_eq!(count(table, "<w:gridCol "), 5);
    let first_row = &table[..table.find("</w:tr>").unwrap()];
    assert_eq!(count(first_row, "<w:tc>"), 5);
    for w in ["Indonesia", "Jakarta", "Vatican City", "Population", "67,413,000"] {
        assert!(text_of(table).contains(w), "{w} not in the table");
    }
    // Text before and after the table stays outside it, in order.
    let before = text_of(&xml[..xml.find("<w:tbl>").unwrap()]);
    assert!(before.contains("Beautiful is better than ugly."));
    // Two-column prose is not a table.
    for name in ["latex-multicolumn.pdf", "pdfa-crazyones.pdf", "japanese-tex-dvipdfmx.pdf"] {
        let r =
            pdf_to_docx(&corpus.join(format!("files/{name}")), &out, &PdfToDocxOptions::default(), &JobControl::new())
                .unwrap();
        assert_eq!(r.tables, 0, "{name}");
        assert_eq!(count(&document_xml(&out), "<w:tbl>"), 0, "{name}");
    }
    let _ = std::fs::remove_file(&out);
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn docx_form_field_values_are_text_once() {
    let corpus = corpus_dir();
    let out = std::env::temp_dir().join(format!("docx-fields-{}.docx", std::process::id()));
    // LibreOffice's form: "Alice" and "Bob" are field values with empty appearance streams
    // (NeedAppearances): written once each, after the labels of their rows.
    pdf_to_docx(
        &corpus.join("files/libreoffice-form-fields.pdf"),
        &out,
        &PdfToDocxOptions::default(),
        &JobControl::new(),
    )
    .unwrap();
    let text = text_of(&document_xml(&out));
    assert_eq!(text.matches("Alice").count(), 1, "{text}");
    assert_eq!(text.matches("Bob").count(), 1, "{text}");
    assert!(text.find("First Name").unwrap() < text.find("Alice").unwrap(), "{text}");
    // LaTeX's form draws its field's text itself ("Name"): not written twice.
    pdf_to_docx(&corpus.join("files/latex-form-fields.pdf"), &out, &PdfToDocxOptions::default(), &JobControl::new())
        .unwrap();
    let text = text_of(&document_xml(&out));
    assert_eq!(text.matches("Name").count(), 1, "{text}");
    let _ = std::fs::remove_file(&out);
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn docx_footnotes_set_one_line_per_block_read_top_to_bottom() {
    let corpus = corpus_dir();
    // google-docs-export writes its three footnotes bottom-up; their boxes touch.
    let out = std::env::temp_dir().join(format!("docx-footnotes-{}.docx", std::process::id()));
    pdf_to_docx(&corpus.join("files/google-docs-export.pdf"), &out, &PdfToDocxOptions::default(), &JobControl::new())
        .unwrap();
    let text = text_of(&document_xml(&out));
    let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("{s} not in {text}"));
    assert!(at("2021 estimate") < at("2020 estimate"), "{text}");
    let _ = std::fs::remove_file(&out);
}

#[test]
#[ignore = "a debugging aid, not a check: DOCX_PDF=<pdf> cargo test docx_dump_tables -- --ignored --nocapture"]
fn docx_dump_tables() {
    let name = std::env::var("DOCX_PDF").unwrap();
    let out = std::env::temp_dir().join("docx-dump.docx");
    pdf_to_docx(Path::new(&name), &out, &PdfToDocxOptions::default(), &JobControl::new()).unwrap();
    let xml = document_xml(&out);
    for t in xml.split("<w:tbl>").skip(1) {
        let t = &t[..t.find("</w:tbl>").unwrap()];
        for row in t.split("<w:tr>").skip(1) {
            eprintln!("ROW: {}", row.split("<w:tc>").skip(1).map(text_of).collect::<Vec<_>>().join(" | "));
        }
    }
}
