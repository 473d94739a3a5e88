//! One reading order for every output of an OCRed page (issue 18 item 2): the JSON's words, the
//! searchable PDF's text layer (in content-stream order) and pdf -> docx's paragraphs.
use std::io::Read;

use engine::convert::docx::{pdf_to_docx, PdfToDocxOptions};
use engine::ocr::pipeline::{ocr_document, OcrOptions, OcrOutput};
use engine::JobControl;

mod common;
use common::{corpus_dir, init_ocr};

/// Letters and digits only, lower-cased: what every output must carry in the same order
/// (spaces, hyphens joined at line ends and paragraph breaks may differ).
fn letters(s: &str) -> String {
    s.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect()
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
#[cfg_attr(all(has_corpus, not(has_ocr_models)), ignore = "OCR models missing: run scripts/setup.sh")]
fn json_text_layer_and_docx_follow_the_same_reading_order() {
    let corpus = corpus_dir();
    init_ocr();
    let dir = std::env::temp_dir().join(format!("ocr-order-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A two-column scan with a heading across it: the order is not simply top to bottom.
    let input = corpus.join("ocr/ocrmypdf-linn-brochure-scan.pdf");

    let blocks = OcrOptions { output: OcrOutput::Blocks, ..Default::default() };
    let r = ocr_document(&input, None, &blocks, &JobControl::new()).unwrap();
    let v: serde_json::Value = serde_json::from_str(&r.json).unwrap();
    let page = &v["pages"][0];
    let words: Vec<&str> = page["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|b| b["lines"].as_array().unwrap())
        .flat_map(|l| l["words"].as_array().unwrap())
        .map(|w| w["text"].as_str().unwrap())
        .collect();
    let json = letters(&words.join(" "));
    assert!(json.len() > 1000, "{json}");
    assert_eq!(letters(page["text"].as_str().unwrap()), json, "pages[].text and the blocks' words");

    let pdf = dir.join("searchable.pdf");
    let searchable = OcrOptions { output: OcrOutput::SearchablePdf, ..Default::default() };
    ocr_document(&input, Some(&pdf), &searchable, &JobControl::new()).unwrap();
    // -raw: the text in content-stream order, not pdftotext's own layout analysis.
    let raw = common::tool("pdftotext").arg("-raw").arg(&pdf).arg("-").output().unwrap();
    assert_eq!(letters(&String::from_utf8(raw.stdout).unwrap()), json, "searchable PDF text layer");

    let docx = dir.join("out.docx");
    let opts = PdfToDocxOptions { ocr: true, ..Default::default() };
    pdf_to_docx(&input, &docx, &opts, &JobControl::new()).unwrap();
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&docx).unwrap()).unwrap();
    let mut xml = String::new();
    zip.by_name("word/document.xml").unwrap().read_to_string(&mut xml).unwrap();
    // The runs' text: `<w:t>` or `<w:t xml:space=...>` (not `<w:tbl>`, `<w:tc>`, ...).
    let text: String = xml
        .split("<w:t")
        .skip(1)
        .filter(|p| p.starts_with('>') || p.starts_with(' '))
        .map(|p| p.split_once('>').unwrap().1.split("</w:t>").next().unwrap())
        .collect::<Vec<_>>()
        .join(" ")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    assert_eq!(letters(&text), json, "pdf -> docx");
    let _ = std::fs::remove_dir_all(&dir);
}
