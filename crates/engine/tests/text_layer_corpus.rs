//! The searchable PDF's text layer on every corpus OCR page (issue 18 item 4): the first page
//! of each scan (`ocr/` and the `scanned` files of `files/`) is OCRed into a searchable PDF,
//! and `pdftotext` of that page gives back every character of the JSON text (as a multiset;
//! whitespace and hyphens aside, since pdftotext joins words hyphenated at a line end).
//! The order pdftotext reads them in is the bench's concern (OCRmyPDF comparison).
//! Skips with one line when the corpus is absent.

mod common;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

use common::{corpus_dir, init_ocr, Scratch};
use engine::ocr::pipeline::{ocr_document, OcrOptions, OcrOutput};
use engine::JobControl;

/// The corpus's OCR pages: `ocr/` (images and the scan) and every file of `files/` whose
/// manifest features include `scanned`, in a format the service reads.
fn scans(dir: &std::path::Path) -> Vec<PathBuf> {
    let readable = |p: &std::path::Path| {
        p.extension().is_some_and(|x| {
            ["pdf", "png", "jpg", "jpeg", "webp"].contains(&x.to_string_lossy().to_lowercase().as_str())
        })
    };
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir.join("ocr"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| readable(p))
        .collect();
    let manifest = std::fs::read_to_string(dir.join("MANIFEST.tsv")).unwrap();
    let mut rows = manifest.lines();
    let head: Vec<&str> = rows.next().unwrap().split('\t').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let (file, features) = (col("file"), col("features"));
    for row in rows {
        let f: Vec<&str> = row.split('\t').collect();
        if f.get(features).is_some_and(|v| v.split(',').any(|x| x == "scanned")) {
            let p = dir.join("files").join(f[file]);
            if readable(&p) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Characters of `text` other than whitespace and hyphens, counted.
fn counted(text: &str) -> HashMap<char, usize> {
    let mut m = HashMap::new();
    for c in text.chars().filter(|c| !c.is_whitespace() && !matches!(c, '-' | '\u{2010}' | '\u{00AD}')) {
        *m.entry(c).or_insert(0) += 1;
    }
    m
}

#[test]
fn pdftotext_of_the_searchable_pdf_gives_back_every_character_of_the_json_text_on_every_corpus_scan() {
    let Some(dir) = corpus_dir() else { return };
    init_ocr();
    let scratch = Scratch::new("text-layer-corpus");
    let mut failures = Vec::new();
    let files = scans(&dir);
    assert!(files.len() >= 15, "only {} corpus scans found", files.len());
    for (n, input) in files.iter().enumerate() {
        let name = input.file_name().unwrap().to_string_lossy().into_owned();
        let out = scratch.path(&format!("{n}.pdf"));
        let options =
            OcrOptions { pages: Some(vec![0]), max_pages: None, output: OcrOutput::SearchablePdf, languages: None };
        let r = ocr_document(input, Some(&out), &options, &JobControl::new()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let json: serde_json::Value = serde_json::from_str(&r.json).unwrap();
        let text = json["pages"][0]["text"].as_str().unwrap_or("").to_string();
        let read =
            Command::new("pdftotext").args(["-f", "1", "-l", "1"]).arg(&out).arg("-").output().expect("pdftotext runs");
        let back = String::from_utf8_lossy(&read.stdout).into_owned();
        let (want, got) = (counted(&text), counted(&back));
        let mut missing: Vec<(char, usize)> = want
            .iter()
            .filter_map(|(c, &k)| {
                (got.get(c).copied().unwrap_or(0) < k).then(|| (*c, k - got.get(c).copied().unwrap_or(0)))
            })
            .collect();
        missing.sort();
        let total: usize = want.values().sum();
        eprintln!("{name}: {total} characters, {} missing", missing.iter().map(|m| m.1).sum::<usize>());
        if !missing.is_empty() {
            failures.push(format!("{name}: missing {missing:?}"));
        }
    }
    assert!(failures.is_empty(), "characters of the JSON text not read back by pdftotext:\n{}", failures.join("\n"));
}
