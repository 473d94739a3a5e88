//! `cargo run --release -p ocr --example ocr_image -- IMAGE...`: prints the text and timings.
//! Needs node_modules (run from the repository root). OCR_NO_FUSE, OCR_TIMING, OCR_DEBUG,
//! OCR_REC_SQUEEZE, OCR_REC_PARALLEL and OCR_OPENVINO set the engine's `OcrTuning` as in the service; OCR_JSON=1 prints each
//! page's `PageText` as one line of JSON (input of the `order_replay` example).
use std::path::Path;
use std::time::Instant;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let models = ocr::ModelFiles::from_manifest(
        &std::env::var_os("OCR_MANIFEST")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| root.join("models/manifest.json")),
        &root.join("node_modules"),
    )
    .unwrap();
    let threads = std::env::var("OCR_THREADS").ok().and_then(|v| v.parse().ok()).unwrap_or(2);
    let det = std::env::var("OCR_DET_MAX_SIDE").ok().and_then(|v| v.parse().ok()).unwrap_or(ocr::DET_MAX_SIDE);
    let t = Instant::now();
    let engine = ocr::Ocr::new(&ocr::OcrConfig {
        ort_library: root.join("node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"),
        models,
        intra_threads: threads,
        det_max_side: det,
        machine_lock: None,
        tuning: ocr::OcrTuning {
            fuse: std::env::var_os("OCR_NO_FUSE").is_none(),
            timing: std::env::var_os("OCR_TIMING").is_some(),
            debug: std::env::var_os("OCR_DEBUG").is_some(),
            rec_parallel: std::env::var_os("OCR_REC_PARALLEL").is_none_or(|v| v != "0"),
            openvino: std::env::var("OCR_OPENVINO").ok().map(|v| v != "0"),
            rec_squeeze: std::env::var("OCR_REC_SQUEEZE").ok().and_then(|v| v.parse().ok()).unwrap_or(ocr::REC_SQUEEZE),
            ..Default::default()
        },
        tessdata: std::env::var_os("TESSDATA_PREFIX").map(Into::into),
    })
    .unwrap();
    eprintln!("init {:?}", t.elapsed());
    for path in std::env::args().skip(1) {
        let img = image::open(&path).unwrap().to_luma8();
        let (w, h) = img.dimensions();
        let mut raw = img.into_raw();
        // OCR_TURN180=1: the page upside down (to check the orientation logic).
        if std::env::var_os("OCR_TURN180").is_some() {
            raw.reverse();
        }
        let im = ocr::Image::new(w as usize, h as usize, 1, raw).unwrap();
        let t = Instant::now();
        // OCR_LANGUAGES=cym,eng: read with those languages' recogniser and dictionaries.
        let languages: Option<Vec<String>> =
            std::env::var("OCR_LANGUAGES").ok().map(|l| l.split(',').map(str::to_owned).collect());
        let recogniser = engine.recogniser_for(languages.as_deref()).unwrap();
        let mut page = engine.recognise_with(&im, recogniser).unwrap();
        // As the service reads a page (crates/engine/src/ocr/pipeline/page.rs).
        let corrected = match &languages {
            Some(l) => ocr::lexicon::correct_page(&mut page, l),
            None => ocr::lexicon::correct_unnamed_page(&mut page),
        };
        eprintln!("{path}: {:?} rotation {}, {corrected} words corrected", t.elapsed(), page.rotation);
        if std::env::var_os("OCR_JSON").is_some() {
            println!("{}", serde_json::to_string(&page).unwrap());
        } else if std::env::var_os("OCR_BOXES").is_some() {
            for b in &page.blocks {
                println!("BLOCK {:?}", b.bbox.map(|v| v as i32));
                for l in &b.lines {
                    println!("  {:?} {}", l.bbox.map(|v| v as i32), l.text);
                }
            }
        } else {
            println!("{}", page.text());
        }
    }
}
