//! Character error rate on the corpus pages with reference text (the corpus's ocr/ folder).
//!
//! CER = Levenshtein distance / reference length (in chars), after normalisation: every
//! whitespace run becomes one space, ends trimmed, typographic quotes and dashes mapped to
//! ASCII. BoW = 1 - matched words / reference words (multiset, punctuation stripped at word
//! ends). Thresholds are about twice the figures measured when the pipeline was written, so
//! a broken stage (lost spaces, wrong order, wrong orientation) fails while run-to-run noise
//! does not.
mod common;
use common::{config, corpus, engine};
use std::path::Path;

fn normalise(s: &str) -> Vec<char> {
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

fn levenshtein(a: &[char], b: &[char]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let sub = prev[j - 1] + usize::from(a[i - 1] != b[j - 1]);
            cur[j] = sub.min(prev[j] + 1).min(cur[j - 1] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

fn cer(reference: &str, hypothesis: &str) -> f64 {
    let r = normalise(reference);
    let h = normalise(hypothesis);
    levenshtein(&r, &h) as f64 / r.len().max(1) as f64
}

fn bow(reference: &str, hypothesis: &str) -> f64 {
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
fn corpus_pages() -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(corpus().join("ocr"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "png" || e == "jpg"))
        .collect();
    files.sort();
    assert!(files.len() >= 7, "{files:?}");
    files
}

fn load(path: &Path) -> ocr::Image {
    let img = image::open(path).unwrap().to_luma8();
    let (w, h) = img.dimensions();
    ocr::Image::new(w as usize, h as usize, 1, img.into_raw()).unwrap()
}

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

/// Recognition on OpenVINO in bfloat16 (one line per run, widths on a grid) reads every
/// corpus OCR page about as well as ONNX Runtime's float32 kernels in batches: within one CER
/// point per page and 0.2 points over all of them. Both engines live in one process, so both
/// use the runtime loaded first (OpenVINO's where installed); without it there is nothing to
/// compare.
#[test]
#[cfg_attr(not(has_ocr_corpus), ignore = "corpus ocr/ pages missing (three are not fetchable): set CORPUS_DIR")]
#[cfg_attr(all(has_ocr_corpus, not(has_ocr_models)), ignore = "OCR models missing: run scripts/setup.sh")]
#[cfg_attr(
    all(has_ocr_corpus, has_ocr_models, not(has_openvino)),
    ignore = "OpenVINO runtime missing: scripts/fetch-models.sh"
)]
fn recognition_on_openvino_reads_every_corpus_page_about_as_well_as_onnx_runtimes_kernels() {
    let mut ov = config(2, None);
    ov.tuning.openvino = Some(true);
    let openvino = ocr::Ocr::new(&ov).unwrap();
    assert!(openvino.uses_openvino(), "ONNX Runtime with OpenVINO is installed but the engine does not use it");
    let mut cpu = config(2, None);
    cpu.tuning.openvino = Some(false);
    let cpu = ocr::Ocr::new(&cpu).unwrap();
    assert!(!cpu.uses_openvino());
    let (mut sum_ov, mut sum_cpu, mut n) = (0.0, 0.0, 0.0);
    for f in corpus_pages() {
        let gt = std::fs::read_to_string(f.with_extension("gt.txt")).unwrap();
        let page = load(&f);
        let chars = normalise(&gt).len() as f64;
        let a = cer(&gt, &openvino.recognise(&page).unwrap().text());
        let b = cer(&gt, &cpu.recognise(&page).unwrap().text());
        eprintln!("{}: CER OpenVINO {:.2}%, ONNX Runtime {:.2}%", f.display(), a * 100.0, b * 100.0);
        assert!(a <= b + 0.01, "{}: {a:.4} vs {b:.4}", f.display());
        (sum_ov, sum_cpu, n) = (sum_ov + a * chars, sum_cpu + b * chars, n + chars);
    }
    assert!(sum_ov / n <= sum_cpu / n + 0.002, "{:.4} vs {:.4}", sum_ov / n, sum_cpu / n);
}
