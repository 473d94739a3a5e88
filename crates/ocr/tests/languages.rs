//! Recogniser selection with the shipped models/manifest.json: which model each language list
//! chooses, that the non-default recogniser is loaded only at its first use (once), and that
//! the corpus's Japanese page (rasterised by pdftoppm) keeps its kana with `jpn` and loses
//! them without it. CER against pdftotext's text: docs/ocr.md and `bun run bench ocr-lang`.
mod common;
use common::{corpus, engine, models};

fn codes(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn the_manifest_lists_a_default_and_a_cjk_recogniser_with_their_languages() {
    let m = models();
    let names: Vec<(&str, &str)> = m.recognisers.iter().map(|r| (r.name.as_str(), r.engine.as_str())).collect();
    assert_eq!(names, vec![("rec", "pp-ocrv6-tiny"), ("rec_cjk", "pp-ocrv6-small")]);
    assert_eq!(m.recognisers[0].rec.path, m.rec.path, "the first recogniser is the default one");
    // The tiny recogniser is the default (no `languages`) and answers requests for
    // English and Simplified Chinese; every other code goes to the small one, which reads
    // Latin diacritics better (docs/ocr.md#languages).
    assert_eq!(m.recognisers[0].languages, vec!["eng", "chi_sim"]);
    for c in &m.recognisers[0].languages {
        assert!(m.recognisers[1].languages.contains(c), "{c}: the small recogniser reads every code the tiny one does");
    }
    assert!(!m.recognisers[0].languages.iter().any(|l| l == "jpn"), "the tiny dictionary has no kana");
}

#[test]
#[cfg_attr(not(has_ocr_models), ignore = "OCR models missing: run scripts/setup.sh")]
fn languages_choose_the_cheapest_recogniser_that_reads_them_all() {
    let e = engine();
    assert_eq!(e.recogniser_for(None), Ok(0));
    assert_eq!(e.recogniser_for(Some(&codes(&["eng"]))), Ok(0));
    assert_eq!(e.recogniser_for(Some(&codes(&["eng", "chi_sim"]))), Ok(0));
    assert_eq!(e.recogniser_for(Some(&codes(&["eng", "deu", "fra"]))), Ok(1));
    assert_eq!(e.recogniser_for(Some(&codes(&["pol"]))), Ok(1));
    assert_eq!(e.recogniser_for(Some(&codes(&["jpn"]))), Ok(1));
    assert_eq!(e.recogniser_for(Some(&codes(&["eng", "chi_tra"]))), Ok(1));
    assert_eq!(e.engine_name(0), "pp-ocrv6-tiny");
    assert_eq!(e.engine_name(1), "pp-ocrv6-small");
    assert_eq!(e.recogniser_for(Some(&codes(&["kor"]))), Err(ocr::LanguageError::Unsupported(codes(&["kor"]))));
    assert_eq!(e.recogniser_for(Some(&[])), Err(ocr::LanguageError::Empty));
    // The ONNX recognisers' codes come first, in manifest order; Tesseract's installed ones follow.
    assert_eq!(
        e.supported_languages()[..37].to_vec(),
        vec![
            "eng", "chi_sim", "deu", "fra", "spa", "ita", "por", "nld", "jpn", "chi_tra", "pol", "ces", "hun", "tur",
            "swe", "dan", "nor", "fin", "est", "lav", "lit", "slv", "hrv", "cat", "glg", "eus", "isl", "gle", "afr",
            "ind", "msa", "lat", "sqi", "mlt", "bos", "swa", "fil"
        ]
    );
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
#[cfg_attr(all(has_corpus, not(has_ocr_models)), ignore = "OCR models missing: run scripts/setup.sh")]
fn the_cjk_recogniser_is_loaded_at_its_first_use_and_reads_japanese_kana() {
    let pdf = corpus().join("files/japanese-tex-dvipdfmx.pdf");
    assert!(pdf.is_file(), "{} missing", pdf.display());
    let dir = std::env::temp_dir().join(format!("ocr-languages-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let stem = dir.join("jp");
    let st = common::tool("pdftoppm")
        .args(["-r", "200", "-gray", "-png", "-singlefile"])
        .arg(&pdf)
        .arg(&stem)
        .status()
        .expect("pdftoppm (poppler-utils) is installed");
    assert!(st.success());
    let img = image::open(stem.with_extension("png")).unwrap().to_luma8();
    let (w, h) = img.dimensions();
    let page = ocr::Image::new(w as usize, h as usize, 1, img.into_raw()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);

    let e = engine();
    assert!(e.is_loaded(0));
    assert!(!e.is_loaded(1), "the CJK recogniser must not be loaded before a request needs it");
    let kana = |s: &str| s.chars().filter(|c| ('\u{3040}'..='\u{30FF}').contains(c)).count();
    let default = e.recognise(&page).unwrap().text();
    assert!(!e.is_loaded(1), "the default recogniser's request loaded the CJK one");
    let jpn = e.recognise_with(&page, 1).unwrap().text();
    assert!(e.is_loaded(1));
    // pdftotext's text of the page has 373 kana; the tiny recogniser has none in its
    // dictionary.
    assert!(kana(&jpn) >= 340, "{jpn}");
    assert!(kana(&default) * 10 < kana(&jpn), "{default}");
    assert!(jpn.contains("リスク中立確率"), "{jpn}");
    // No space was recovered between Japanese characters.
    assert!(
        !jpn.chars()
            .collect::<Vec<_>>()
            .windows(3)
            .any(|w| ocr::languages::is_cjk(w[0]) && w[1] == ' ' && ocr::languages::is_cjk(w[2])),
        "{jpn}"
    );
}
