//! Every corpus PDF and image (JPEG, PNG, WebP) through OCR with a searchable PDF output,
//! first two pages (the corpus has 352-page books; born-digital pages are skipped by the
//! text-layer rule anyway). Each run either writes a PDF that passes `qpdf --check` (exit 0
//! or 3) with every page of the input, whose blocks JSON has one entry per selected page,
//! or fails with a code docs/ocr.md documents; never a panic, never longer than 120 s. The
//! hostile files matter most here: the 35,000-pixel JBIG2 scan, the enormous page, the
//! decompression bomb and the 2,400-dpi typewriter scan must be capped, not exhaust memory.
//! Prints a table of results.

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{corpus_dir, guarded, init_ocr, qpdf_check, qpdf_ok, qpdf_pages, Scratch};
use engine::ocr::pipeline::{ocr_document, OcrOptions, OcrOutput};
use engine::{ErrorCode, JobControl};

const TIMEOUT: Duration = Duration::from_secs(120);

/// Codes an OCR input may legitimately fail with (docs/ocr.md, Errors).
fn documented(code: ErrorCode) -> bool {
    matches!(code, ErrorCode::InvalidPdf | ErrorCode::EncryptedInput | ErrorCode::InvalidImage)
}

fn ocr_inputs(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ["files", "ocr"]
        .iter()
        .flat_map(|sub| std::fs::read_dir(dir.join(sub)).unwrap().filter_map(|e| e.ok().map(|e| e.path())))
        .filter(|p| {
            p.extension().is_some_and(|x| ["pdf", "png", "jpg", "jpeg", "webp"].contains(&x.to_str().unwrap_or("")))
        })
        .collect();
    files.sort();
    files
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
#[cfg_attr(all(has_corpus, not(has_ocr_models)), ignore = "OCR models missing: run scripts/setup.sh")]
fn every_corpus_pdf_and_image_is_ocred_into_a_valid_searchable_pdf_or_fails_with_a_documented_code() {
    let dir = corpus_dir();
    init_ocr();
    let scratch = Scratch::new("ocr-corpus");
    let mut failures = Vec::new();
    for (n, input) in ocr_inputs(&dir).into_iter().enumerate() {
        let name = input.file_name().unwrap().to_string_lossy().into_owned();
        let out = scratch.path(&format!("{n}.pdf"));
        let out2 = out.clone();
        let started = Instant::now();
        let result = guarded(TIMEOUT, move || {
            let count = engine::identify(&input).ok().and_then(|i| i.page_count).unwrap_or(1).max(1);
            let pages: Vec<i64> = (0..count.min(2) as i64).collect();
            let options =
                OcrOptions { pages: Some(pages.clone()), output: OcrOutput::SearchablePdf, ..Default::default() };
            ocr_document(&input, Some(&out2), &options, &JobControl::new()).map(|r| (r, pages.len()))
        });
        let verdict = match result {
            Err(msg) => Err(msg),
            Ok(Err(e)) if documented(e.code) => Ok(format!("error {}", e.code)),
            Ok(Err(e)) => Err(format!("undocumented error {e}")),
            Ok(Ok((r, selected))) => {
                let json: serde_json::Value = serde_json::from_str(&r.json).unwrap();
                let entries = json["pages"].as_array().map_or(0, Vec::len);
                let code = qpdf_check(&out, None);
                let pages = qpdf_pages(&out, None);
                if !qpdf_ok(code) {
                    Err(format!("qpdf --check exit {code:?}"))
                } else if pages.is_some_and(|p| p as usize != r.page_count) {
                    Err(format!("{pages:?} pages written, the input has {}", r.page_count))
                } else if entries != selected {
                    Err(format!("{entries} pages in the JSON, {selected} selected"))
                } else {
                    let words: usize = json["pages"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|p| p["text"].as_str().unwrap_or("").split_whitespace().count())
                        .sum();
                    Ok(format!("ok {}/{} OCRed, {words} words", r.pages_processed, selected))
                }
            }
        };
        let ms = started.elapsed().as_millis();
        match &verdict {
            Ok(v) => eprintln!("{name:50} {v:36} {ms:>6} ms"),
            Err(v) => {
                eprintln!("{name:50} FAIL {v} {ms:>6} ms");
                failures.push(format!("{name}: {v}"));
            }
        }
        let _ = std::fs::remove_file(&out);
    }
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
}
