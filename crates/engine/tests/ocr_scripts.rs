//! The scripts the ONNX recognisers do not read, end to end: a generated page per script
//! family (crates/script_pages.rs) read by Tesseract through `ocr_document` as a searchable
//! PDF: the JSON within the family's CER bound, `pdftotext` of the text layer giving back the
//! same text, right-to-left text in logical order in both, Thai and Devanagari lines without
//! spaces the text does not have; without `languages` a Cyrillic page's script is detected and
//! Tesseract reads it; a page Tesseract does not finish in time fails alone with
//! `ocr_timeout`, and the engine reads the next request.
use std::path::Path;
use std::time::Duration;

use engine::ocr::pipeline::{ocr_document, OcrOptions, OcrOutput};
use engine::JobControl;

mod common;
use common::init_ocr;
#[path = "../../script_pages.rs"]
mod script_pages;
use script_pages::{cer, normalise, spaces, ScriptPage};

const DPI: u32 = 200;

fn pdftotext(path: &Path) -> String {
    let out = common::tool("pdftotext").arg(path).arg("-").output().expect("pdftotext runs");
    String::from_utf8(out.stdout).unwrap()
}

fn options(output: OcrOutput, languages: Option<&[&str]>, page_timeout: Option<Duration>) -> OcrOptions {
    OcrOptions {
        pages: None,
        max_pages: None,
        output,
        languages: languages.map(|l| l.iter().map(|s| s.to_string()).collect()),
        page_timeout,
        ..Default::default()
    }
}

/// CER bound of the JSON and of the text layer on these clean 200-dpi pages.
fn bound(p: &ScriptPage) -> f64 {
    match p.family {
        "Thai" => 0.05,
        _ => 0.03,
    }
}

/// The first `n` words of a text, without punctuation: poppler gives a right-to-left
/// sentence's full stop before the space (`word .next`), as it does for any PDF typeset right
/// to left (Chromium's and LibreOffice's do the same), so the words are what is compared.
fn first_words(text: &str, n: usize) -> Vec<String> {
    words(text).into_iter().take(n).collect()
}

fn words(text: &str) -> Vec<String> {
    normalise(&text.replace(['.', ',', '।'], " ")).split(' ').filter(|w| !w.is_empty()).map(str::to_owned).collect()
}

/// CER over the words of `text` (punctuation aside, see [`first_words`]).
fn word_cer(reference: &str, text: &str) -> f64 {
    cer(&words(reference).join(" "), &words(text).join(" "))
}

/// Reads `p`'s page with its language as a searchable PDF and checks the JSON and the layer.
fn read_family(p: &ScriptPage) {
    init_ocr();
    let dir = common::Scratch::new(&format!("ocr-scripts-{}", p.language));
    let png = script_pages::render(&dir.0, p, DPI, 0);
    let out = dir.path("out.pdf");
    let r = ocr_document(
        &png,
        Some(&out),
        &options(OcrOutput::SearchablePdf, Some(&[p.language]), None),
        &JobControl::new(),
    )
    .unwrap();
    assert_eq!(r.pages_processed, 1);
    let v: serde_json::Value = serde_json::from_str(&r.json).unwrap();
    assert!(v["engine"].as_str().unwrap().starts_with("tesseract-"), "{}: {}", p.family, v["engine"]);
    let json_text = v["pages"][0]["text"].as_str().unwrap();
    let json_cer = cer(p.text, json_text);
    assert!(json_cer <= bound(p), "{}: JSON CER {:.2}%: {json_text}", p.family, json_cer * 100.0);
    let layer = pdftotext(&out);
    let layer_cer = word_cer(p.text, &layer);
    assert!(layer_cer <= bound(p), "{}: text layer CER {:.2}%: {layer}", p.family, layer_cer * 100.0);
    // Logical order: the text starts with the reference's first words, in both (a reversed
    // right-to-left line would start with its last word, or with each word's letters reversed).
    // Thai wraps inside its runs, so its first run is compared up to the first line's end.
    let n = if p.family == "Thai" { 1 } else { 3 };
    let first = |t: &str| first_words(t, n).join(" ").chars().take(40).collect::<String>();
    assert_eq!(first(json_text), first(p.text), "{}: JSON order", p.family);
    assert_eq!(first(&layer), first(p.text), "{}: text layer order", p.family);
    assert!(common::qpdf_ok(common::qpdf_check(&out, None)), "{}: qpdf --check", p.family);
}

#[test]
#[cfg_attr(
    not(all(has_ocr_models, has_tessdata_scripts)),
    ignore = "OCR models or Tesseract traineddata missing: run scripts/setup.sh"
)]
fn a_cyrillic_page_is_read_by_tesseract_and_its_text_layer_reads_back() {
    read_family(&script_pages::CYRILLIC);
}

#[test]
#[cfg_attr(
    not(all(has_ocr_models, has_tessdata_scripts)),
    ignore = "OCR models or Tesseract traineddata missing: run scripts/setup.sh"
)]
fn a_greek_page_is_read_by_tesseract_with_its_tonos_and_final_sigma() {
    read_family(&script_pages::GREEK);
}

#[test]
#[cfg_attr(
    not(all(has_ocr_models, has_tessdata_scripts)),
    ignore = "OCR models or Tesseract traineddata missing: run scripts/setup.sh"
)]
fn an_arabic_page_is_in_logical_order_in_the_json_and_the_text_layer() {
    read_family(&script_pages::ARABIC);
}

#[test]
#[cfg_attr(
    not(all(has_ocr_models, has_tessdata_scripts)),
    ignore = "OCR models or Tesseract traineddata missing: run scripts/setup.sh"
)]
fn a_hebrew_page_is_in_logical_order_in_the_json_and_the_text_layer() {
    read_family(&script_pages::HEBREW);
}

#[test]
#[cfg_attr(
    not(all(has_ocr_models, has_tessdata_scripts)),
    ignore = "OCR models or Tesseract traineddata missing: run scripts/setup.sh"
)]
fn a_devanagari_page_is_read_by_tesseract_and_its_text_layer_reads_back() {
    read_family(&script_pages::DEVANAGARI);
}

#[test]
#[cfg_attr(
    not(all(has_ocr_models, has_tessdata_scripts)),
    ignore = "OCR models or Tesseract traineddata missing: run scripts/setup.sh"
)]
fn a_thai_page_is_read_by_tesseract_and_its_text_layer_reads_back() {
    read_family(&script_pages::THAI);
}

#[test]
#[cfg_attr(
    not(all(has_ocr_models, has_tessdata_scripts)),
    ignore = "OCR models or Tesseract traineddata missing: run scripts/setup.sh"
)]
fn a_hangul_page_is_read_by_tesseract_and_its_text_layer_reads_back() {
    read_family(&script_pages::HANGUL);
}

#[test]
#[cfg_attr(
    not(all(has_ocr_models, has_tessdata_scripts)),
    ignore = "OCR models or Tesseract traineddata missing: run scripts/setup.sh"
)]
fn thai_and_devanagari_lines_have_no_spaces_their_text_does_not_have() {
    init_ocr();
    let dir = common::Scratch::new("ocr-scripts-spaces");
    for p in [&script_pages::THAI, &script_pages::DEVANAGARI] {
        let png = script_pages::render(&dir.0, p, DPI, 0);
        let out = dir.path(&format!("{}.pdf", p.language));
        let r = ocr_document(
            &png,
            Some(&out),
            &options(OcrOutput::SearchablePdf, Some(&[p.language]), None),
            &JobControl::new(),
        )
        .unwrap();
        let v: serde_json::Value = serde_json::from_str(&r.json).unwrap();
        let json_text = v["pages"][0]["text"].as_str().unwrap();
        // Line breaks stand where the text had a space or where it wrapped: count within lines.
        let within = |t: &str| t.lines().map(spaces).sum::<usize>();
        assert!(within(json_text) <= spaces(p.text), "{}: spaces in the JSON lines: {json_text}", p.family);
        let layer = pdftotext(&out);
        assert!(within(&layer) <= spaces(p.text), "{}: spaces in the text layer's lines: {layer}", p.family);
    }
}

#[test]
#[cfg_attr(
    not(all(has_ocr_models, has_tessdata_scripts)),
    ignore = "OCR models or Tesseract traineddata missing: run scripts/setup.sh"
)]
fn without_languages_a_cyrillic_page_is_detected_and_read_by_tesseract() {
    init_ocr();
    let dir = common::Scratch::new("ocr-scripts-auto");
    let p = &script_pages::CYRILLIC;
    let png = script_pages::render(&dir.0, p, DPI, 0);
    let r = ocr_document(&png, None, &options(OcrOutput::Blocks, None, None), &JobControl::new()).unwrap();
    let v: serde_json::Value = serde_json::from_str(&r.json).unwrap();
    let page = &v["pages"][0];
    assert_eq!(v["engine"], "pp-ocrv6-tiny", "the document's default reader");
    assert!(page["engine"].as_str().is_some_and(|e| e.starts_with("tesseract-")), "{page}");
    assert_eq!(page["script"]["name"], "Cyrillic", "{page}");
    assert_eq!(page["script"]["sure"], true, "{page}");
    let c = cer(p.text, page["text"].as_str().unwrap());
    assert!(c <= bound(p), "CER {:.2}%: {}", c * 100.0, page["text"]);
}

#[test]
#[cfg_attr(
    not(all(has_ocr_models, has_tessdata_scripts)),
    ignore = "OCR models or Tesseract traineddata missing: run scripts/setup.sh"
)]
fn a_page_tesseract_does_not_finish_in_time_fails_with_ocr_timeout_and_the_engine_reads_on() {
    init_ocr();
    let dir = common::Scratch::new("ocr-scripts-timeout");
    let p = &script_pages::CYRILLIC;
    let png = script_pages::render(&dir.0, p, DPI, 0);
    let out = dir.path("out.pdf");
    let r = ocr_document(
        &png,
        Some(&out),
        &options(OcrOutput::SearchablePdf, Some(&["rus"]), Some(Duration::from_millis(1))),
        &JobControl::new(),
    )
    .unwrap();
    let v: serde_json::Value = serde_json::from_str(&r.json).unwrap();
    let page = &v["pages"][0];
    assert_eq!(page["error"]["code"], "ocr_timeout", "{page}");
    assert_eq!(page["ocr"], false);
    assert_eq!(r.pages_processed, 0, "a failed page is not billed");
    // The page is kept in the searchable PDF, without a text layer.
    assert!(common::qpdf_ok(common::qpdf_check(&out, None)));
    assert_eq!(normalise(&pdftotext(&out)), "");
    // The engine (the worker's process) reads the next request.
    let r = ocr_document(&png, None, &options(OcrOutput::Blocks, Some(&["rus"]), None), &JobControl::new()).unwrap();
    let v: serde_json::Value = serde_json::from_str(&r.json).unwrap();
    assert!(cer(p.text, v["pages"][0]["text"].as_str().unwrap()) <= bound(p));
}

#[test]
#[cfg_attr(
    not(all(has_ocr_models, has_tessdata_scripts)),
    ignore = "OCR models or Tesseract traineddata missing: run scripts/setup.sh"
)]
fn a_cancelled_tesseract_page_stops_the_job_as_cancelled() {
    init_ocr();
    let dir = common::Scratch::new("ocr-scripts-cancel");
    let png = script_pages::render(&dir.0, &script_pages::GREEK, DPI, 0);
    let control = JobControl::new();
    control.cancel();
    let e = ocr_document(&png, None, &options(OcrOutput::Blocks, Some(&["ell"]), None), &control).unwrap_err();
    assert_eq!(e.code, engine::ErrorCode::Cancelled);
}
