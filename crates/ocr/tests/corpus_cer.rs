//! Character error rate on the corpus pages with reference text (the corpus's ocr/ folder).
//!
//! CER = Levenshtein distance / reference length (in chars), after normalisation: every
//! whitespace run becomes one space, ends trimmed, typographic quotes and dashes mapped to
//! ASCII. BoW = 1 - matched words / reference words (multiset, punctuation stripped at word
//! ends). Thresholds are about twice the figures measured when the pipeline was written, so
//! a broken stage (lost spaces, wrong order, wrong orientation) fails while run-to-run noise
//! does not.
mod common;
use common::cer::{bow, cer, corpus_pages, load};
use common::{config, corpus, engine};

#[test]
#[cfg_attr(not(has_ocr_corpus), ignore = "corpus ocr/ pages missing (three are not fetchable): set CORPUS_DIR")]
#[cfg_attr(all(has_ocr_corpus, not(has_ocr_models)), ignore = "OCR models missing: run scripts/setup.sh")]
fn character_error_rate_stays_under_the_threshold_on_every_reference_page() {
    let dir = corpus().join("ocr");
    let engine = engine();
    // (file, max CER, max BoW)
    let pages = [
        ("tesseract-phototest.png", 0.03, 0.05),
        ("tesseract-eurotext-multilingual.png", 0.06, 0.18),
        ("ocrmypdf-linn-brochure.png", 0.05, 0.12),
        ("unlv-8071_093-magazine.png", 0.12, 0.06),
        ("sroie-receipt-006.jpg", 0.40, 0.45),
        ("sroie-receipt-054.jpg", 0.15, 0.15),
        ("sroie-receipt-080.jpg", 0.45, 0.65),
    ];
    let mut failures = Vec::new();
    for (file, max_cer, max_bow) in pages {
        let gt = std::fs::read_to_string(dir.join(file.rsplit_once('.').unwrap().0.to_string() + ".gt.txt")).unwrap();
        let t = std::time::Instant::now();
        let page = engine.recognise(&load(&dir.join(file))).unwrap();
        let text = page.text();
        let (c, b) = (cer(&gt, &text), bow(&gt, &text));
        eprintln!("{file}: CER {:.1}% BoW {:.1}% in {:?}", c * 100.0, b * 100.0, t.elapsed());
        if std::env::var_os("OCR_PRINT").is_some() {
            eprintln!("{text}\n----");
        }
        if c > max_cer || b > max_bow {
            failures.push(format!("{file}: CER {c:.3} (max {max_cer}), BoW {b:.3} (max {max_bow})"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
#[cfg_attr(not(has_ocr_corpus), ignore = "corpus ocr/ pages missing (three are not fetchable): set CORPUS_DIR")]
#[cfg_attr(all(has_ocr_corpus, not(has_ocr_models)), ignore = "OCR models missing: run scripts/setup.sh")]
fn pages_turned_by_90_180_270_degrees_are_read_upright() {
    let engine = engine();
    let src = load(&corpus().join("ocr/tesseract-phototest.png"));
    let grey = src.to_grey();
    for deg in [0u32, 90, 180, 270] {
        let turned = grey.rotate_cw(deg);
        let img = ocr::Image::new(turned.width, turned.height, 1, turned.data).unwrap();
        let page = engine.recognise(&img).unwrap();
        let text = page.text();
        assert_eq!(page.rotation, (360 - deg) % 360, "turned by {deg}: {text}");
        assert!(text.contains("The quick brown dog jumped over the"), "turned by {deg}: {text}");
        // Word boxes lie inside the turned image.
        for w in page.blocks.iter().flat_map(|b| &b.lines).flat_map(|l| &l.words) {
            assert!(w.bbox[0] >= -2.0 && w.bbox[2] <= img.width as f32 + 2.0, "{w:?}");
            assert!(w.bbox[1] >= -2.0 && w.bbox[3] <= img.height as f32 + 2.0, "{w:?}");
        }
    }
    let page = engine.recognise(&load(&corpus().join("files/phototest-rotated-90.png"))).unwrap();
    assert!(page.text().contains("quick brown dog"), "{}", page.text());
}

#[test]
#[cfg_attr(not(has_ocr_corpus), ignore = "corpus ocr/ pages missing (three are not fetchable): set CORPUS_DIR")]
#[cfg_attr(all(has_ocr_corpus, not(has_ocr_models)), ignore = "OCR models missing: run scripts/setup.sh")]
fn model_runs_wait_for_the_machine_lock() {
    let lock = std::env::temp_dir().join(format!("ocr-machine-lock-test-{}.lock", std::process::id()));
    let engine = ocr::Ocr::new(&config(1, Some(lock.clone()))).unwrap();
    // Another process's run, as far as flock is concerned: a second open of the file.
    let holder = std::fs::OpenOptions::new().write(true).open(&lock).unwrap();
    holder.lock().unwrap();
    let page = load(&corpus().join("ocr/tesseract-phototest.png"));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        s.spawn(|| tx.send(engine.recognise(&page).map(|t| t.text())).unwrap());
        // The page takes about 0.3 s; while the lock is held it must not finish.
        assert!(rx.recv_timeout(std::time::Duration::from_millis(1500)).is_err(), "recognised while the lock was held");
        holder.unlock().unwrap();
        let text =
            rx.recv_timeout(std::time::Duration::from_secs(60)).expect("never finished after the unlock").unwrap();
        assert!(text.contains("quick brown dog"), "{text}");
    });
    let _ = std::fs::remove_file(&lock);
}

/// Batches read side by side by single-threaded sessions ([`ocr::OcrTuning::rec_parallel`],
/// the default with 2 threads) give every reference page exactly what one 2-thread session
/// reading them one after another gives: the same batches, so the same reads.
#[test]
#[cfg_attr(not(has_ocr_corpus), ignore = "corpus ocr/ pages missing (three are not fetchable): set CORPUS_DIR")]
#[cfg_attr(all(has_ocr_corpus, not(has_ocr_models)), ignore = "OCR models missing: run scripts/setup.sh")]
fn batches_read_side_by_side_give_the_same_page_as_one_after_another() {
    let side_by_side = engine();
    let mut one_by_one = config(2, None);
    one_by_one.tuning.rec_parallel = false;
    let one_by_one = ocr::Ocr::new(&one_by_one).unwrap();
    for f in corpus_pages() {
        let page = load(&f);
        let a = serde_json::to_string(&side_by_side.recognise(&page).unwrap()).unwrap();
        let b = serde_json::to_string(&one_by_one.recognise(&page).unwrap()).unwrap();
        assert!(a == b, "{}: the two ways read the page differently", f.display());
    }
}
