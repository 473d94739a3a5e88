//! Character error rate and bag-of-words error against the corpus's reference pages.
use super::corpus;
use std::path::Path;

pub fn normalise(s: &str) -> Vec<char> {
    let mapped: String = s
        .chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' => '"',
            '\u{2013}' | '\u{2014}' => '-',
            c => c,
        })
        .collect();
    mapped.split_whitespace().collect::<Vec<_>>().join(" ").chars().collect()
}

pub fn cer(reference: &str, hypothesis: &str) -> f64 {
    let r = normalise(reference);
    let h = normalise(hypothesis);
    strsim::generic_levenshtein(&r, &h) as f64 / r.len().max(1) as f64
}

pub fn bow(reference: &str, hypothesis: &str) -> f64 {
    let words = |s: &str| -> Vec<String> {
        s.split_whitespace()
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_string())
            .filter(|w| !w.is_empty())
            .collect()
    };
    let r = words(reference);
    let mut h = words(hypothesis);
    let mut matched = 0;
    for w in &r {
        if let Some(p) = h.iter().position(|x| x == w) {
            h.swap_remove(p);
            matched += 1;
        }
    }
    1.0 - matched as f64 / r.len().max(1) as f64
}

/// Every image of the corpus's ocr/ folder (the 7 reference pages), in name order.
pub fn corpus_pages() -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(corpus().join("ocr"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "png" || e == "jpg"))
        .collect();
    files.sort();
    assert!(files.len() >= 7, "{files:?}");
    files
}

pub fn load(path: &Path) -> ocr::Image {
    let img = image::open(path).unwrap().to_luma8();
    let (w, h) = img.dimensions();
    ocr::Image::new(w as usize, h as usize, 1, img.into_raw()).unwrap()
}
