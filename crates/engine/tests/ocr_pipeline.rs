//! OCR pipeline over corpus scans: blocks JSON, searchable PDF (checked with pdftotext),
//! pages with text skipped, rotated pages read upright.

use engine::ocr::pipeline::{ocr_document, OcrOptions, OcrOutput};
use engine::JobControl;

mod common;
use common::{corpus_dir, init_ocr};

fn json(result: &engine::ocr::pipeline::OcrResult) -> serde_json::Value {
    serde_json::from_str(&result.json).unwrap()
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
#[cfg_attr(all(has_corpus, not(has_ocr_models)), ignore = "OCR models missing: run scripts/setup.sh")]
fn each_of_four_turned_scan_pages_is_read_upright() {
    let corpus = corpus_dir();
    init_ocr();
    let options = OcrOptions { output: OcrOutput::Blocks, ..Default::default() };
    let r = ocr_document(&corpus.join("files/scanned-rotated-4-directions.pdf"), None, &options, &JobControl::new())
        .unwrap();
    assert_eq!(r.pages_processed, 4);
    let v = json(&r);
    let pages = v["pages"].as_array().unwrap();
    assert_eq!(pages.len(), 4);
    let first = pages[0]["text"].as_str().unwrap().to_lowercase();
    assert!(first.split_whitespace().count() >= 5, "{first}");
    for p in pages {
        let text = p["text"].as_str().unwrap().to_lowercase();
        // The same page turned four ways: most words of page 1 are found on each.
        let words: Vec<&str> = first.split_whitespace().filter(|w| w.len() > 3).collect();
        let found = words.iter().filter(|w| text.contains(*w)).count();
        assert!(found * 10 >= words.len() * 7, "page {} rotation {}: {text}", p["page"], p["text_rotation"]);
        // Boxes are inside the page, in points.
        let (w, h) = (p["width"].as_f64().unwrap(), p["height"].as_f64().unwrap());
        for b in p["blocks"].as_array().unwrap() {
            for l in b["lines"].as_array().unwrap() {
                for wd in l["words"].as_array().unwrap() {
                    let bb: Vec<f64> = wd["bbox"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
                    assert!(bb[0] <= bb[2] && bb[1] <= bb[3] && bb[2] <= w + 0.01 && bb[3] <= h + 0.01, "{bb:?}");
                }
            }
        }
    }
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
#[cfg_attr(all(has_corpus, not(has_ocr_models)), ignore = "OCR models missing: run scripts/setup.sh")]
fn searchable_pdf_keeps_the_page_and_pdftotext_finds_the_words() {
    let corpus = corpus_dir();
    init_ocr();
    let dir = std::env::temp_dir().join(format!("ocr-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("out.pdf");
    let options = OcrOptions { output: OcrOutput::SearchablePdf, ..Default::default() };
    let input = corpus.join("ocr/ocrmypdf-linn-brochure-scan.pdf");
    let r = ocr_document(&input, Some(&out), &options, &JobControl::new()).unwrap();
    assert_eq!(r.pages_processed, 1);
    assert!(r.output_bytes > 0);
    let text = String::from_utf8(common::tool("pdftotext").arg(&out).arg("-").output().unwrap().stdout).unwrap();
    for w in ["LinnSequencer", "sequence", "RECORD", "synchronization"] {
        assert!(text.contains(w), "{w} missing from: {text}");
    }
    // Reading order: the left column's paragraph comes before the right column's.
    let a = text.find("To record a sequence").expect("left column");
    let b = text.find("The INSERT/COPY function").expect("right column");
    assert!(a < b, "{text}");
    // The original page is kept: the same page count and size.
    let info = String::from_utf8(common::tool("pdfinfo").arg(&out).output().unwrap().stdout).unwrap();
    let orig = String::from_utf8(common::tool("pdfinfo").arg(&input).output().unwrap().stdout).unwrap();
    let size = |s: &str| s.lines().find(|l| l.starts_with("Page size")).map(str::to_string);
    assert_eq!(size(&info), size(&orig));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
#[cfg_attr(all(has_corpus, not(has_ocr_models)), ignore = "OCR models missing: run scripts/setup.sh")]
fn pages_that_already_carry_text_are_not_ocred_but_return_their_text_and_count() {
    let corpus = corpus_dir();
    init_ocr();
    let options = OcrOptions { output: OcrOutput::Blocks, ..Default::default() };
    let r = ocr_document(&corpus.join("files/rotated-page-attribute.pdf"), None, &options, &JobControl::new()).unwrap();
    let v = json(&r);
    // Billing by the spec: every returned page counts, including pages read from their layer.
    assert_eq!(r.pages_processed, r.page_count, "{v}");
    assert_eq!(v["pages"][0]["skipped"], "has_text");
    assert_eq!(v["pages"][0]["ocr"], false);
    assert!(crate_has_text(v["pages"][0]["text"].as_str().unwrap()), "{v}");
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
#[cfg_attr(all(has_corpus, not(has_ocr_models)), ignore = "OCR models missing: run scripts/setup.sh")]
fn an_image_input_is_one_page() {
    let corpus = corpus_dir();
    init_ocr();
    let options = OcrOptions { output: OcrOutput::Blocks, ..Default::default() };
    let r = ocr_document(&corpus.join("files/phototest-rotated-90.png"), None, &options, &JobControl::new()).unwrap();
    assert_eq!((r.page_count, r.pages_processed), (1, 1));
    let v = json(&r);
    assert!(v["pages"][0]["text"].as_str().unwrap().contains("quick brown dog"), "{v}");
}

#[test]
#[cfg_attr(not(has_ocr_models), ignore = "OCR models missing: run scripts/setup.sh")]
fn a_cancelled_job_stops() {
    init_ocr();
    let scratch = common::Scratch::new("ocr-cancel");
    let input = common::write(&scratch, "in.pdf", &common::synthetic_pdf(&[(612, 792, 0); 4], false));
    let control = JobControl::new();
    control.cancel();
    let options = OcrOptions { output: OcrOutput::Blocks, ..Default::default() };
    let e = ocr_document(&input, None, &options, &control).unwrap_err();
    assert_eq!(e.code, engine::ErrorCode::Cancelled);
}

/// The Tesseract test page (`phototest`, a PNG) as an RGBA WebP whose white background is transparent black:
/// read correctly only if the decoder (MuPDF has none) flattens alpha on white.
fn phototest_as_transparent_webp(phototest: &std::path::Path, path: &std::path::Path) {
    let pix = mupdf::Image::from_file(phototest.to_str().unwrap()).unwrap().to_pixmap().unwrap();
    let (w, h, n, stride) = (pix.width() as usize, pix.height() as usize, pix.n() as usize, pix.stride() as usize);
    let samples = pix.samples();
    let mut rgba = Vec::with_capacity(w * h * 4);
    for y in 0..h {
        for x in 0..w {
            let v = samples[y * stride + x * n];
            rgba.extend_from_slice(&[0, 0, 0, 255 - v]);
        }
    }
    let mut out = Vec::new();
    image_webp::WebPEncoder::new(&mut out).encode(&rgba, w as u32, h as u32, image_webp::ColorType::Rgba8).unwrap();
    std::fs::write(path, out).unwrap();
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
#[cfg_attr(all(has_corpus, not(has_ocr_models)), ignore = "OCR models missing: run scripts/setup.sh")]
fn a_webp_image_is_decoded_with_its_alpha_flattened_on_white_and_read() {
    let corpus = corpus_dir();
    init_ocr();
    let path = std::env::temp_dir().join(format!("ocr-webp-{}.webp", std::process::id()));
    phototest_as_transparent_webp(&corpus.join("ocr/tesseract-phototest.png"), &path);
    let options = OcrOptions { output: OcrOutput::Blocks, ..Default::default() };
    let r = ocr_document(&path, None, &options, &JobControl::new());
    let _ = std::fs::remove_file(&path);
    let r = r.unwrap();
    assert_eq!((r.page_count, r.pages_processed), (1, 1));
    let text = json(&r)["pages"][0]["text"].as_str().unwrap().to_owned();
    assert!(text.contains("quick brown dog") && text.contains("12 point"), "{text}");
}

/// A PNG whose header claims `w` x `h` pixels, with one tiny (wrong-sized) data chunk.
fn png_claiming(w: u32, h: u32) -> Vec<u8> {
    let chunk = |kind: &[u8], data: &[u8]| {
        let mut c = (data.len() as u32).to_be_bytes().to_vec();
        c.extend_from_slice(kind);
        c.extend_from_slice(data);
        let mut crc = flate2::Crc::new();
        crc.update(kind);
        crc.update(data);
        c.extend_from_slice(&crc.sum().to_be_bytes());
        c
    };
    let mut ihdr = w.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 0, 0, 0, 0]); // 8-bit grey
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(chunk(b"IHDR", &ihdr));
    png.extend(chunk(b"IDAT", &[0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]));
    png.extend(chunk(b"IEND", &[]));
    png
}

#[test]
#[cfg_attr(not(has_ocr_models), ignore = "OCR models missing: run scripts/setup.sh")]
fn an_image_above_the_pixel_cap_is_refused_before_it_is_decoded() {
    init_ocr();
    let path = std::env::temp_dir().join(format!("ocr-huge-{}.png", std::process::id()));
    std::fs::write(&path, png_claiming(40_000, 40_000)).unwrap();
    let options = OcrOptions { output: OcrOutput::Blocks, ..Default::default() };
    let r = ocr_document(&path, None, &options, &JobControl::new());
    let _ = std::fs::remove_file(&path);
    let e = r.unwrap_err();
    assert_eq!(e.code, engine::ErrorCode::InvalidImage, "{e}");
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
#[cfg_attr(all(has_corpus, not(has_ocr_models)), ignore = "OCR models missing: run scripts/setup.sh")]
fn a_decompression_bomb_is_refused_before_mupdf_reads_it() {
    let corpus = corpus_dir();
    init_ocr();
    for output in [OcrOutput::Blocks, OcrOutput::SearchablePdf] {
        let out = std::env::temp_dir().join(format!("ocr-bomb-{}.pdf", std::process::id()));
        let options = OcrOptions { output, ..Default::default() };
        let started = std::time::Instant::now();
        let e = ocr_document(&corpus.join("files/decompression-bomb.pdf"), Some(&out), &options, &JobControl::new())
            .unwrap_err();
        assert_eq!(e.code, engine::ErrorCode::InvalidPdf, "{e}");
        assert!(started.elapsed().as_secs() < 30, "took {:?}", started.elapsed());
        assert!(!out.exists(), "nothing is written for a refused input");
    }
}

fn crate_has_text(s: &str) -> bool {
    engine::ocr::pipeline::has_text_layer(s)
}
