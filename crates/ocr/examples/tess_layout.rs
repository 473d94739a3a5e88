//! `cargo run --release -p ocr --example tess_layout -- LANG IMAGE:DPI...`: reads each image with
//! Tesseract (`LANG`, `rus` or `tha`) once per layout (Tesseract's own page segmentation and our
//! detector's lines) and once with the layout `tesseract::layout_for` chooses, and prints one
//! line of JSON per image and read: `{"image":…,"layout":"Tesseract"|"Detector"|"chosen","ms":…,"text":…}`. The measurement behind
//! `tesseract::layout_for` (scripts/bench/ocr-tess-layout.ts). Needs node_modules (run from the
//! repository root); TESSDATA_PREFIX as in the service.
use std::path::Path;
use std::time::{Duration, Instant};

use ocr::tesseract::{Layout, TessPage};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let models =
        ocr::ModelFiles::from_manifest(&root.join("models/manifest.json"), &root.join("node_modules")).unwrap();
    let threads = std::env::var("OCR_THREADS").ok().and_then(|v| v.parse().ok()).unwrap_or(2);
    let engine = ocr::Ocr::new(&ocr::OcrConfig {
        ort_library: root.join("node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"),
        models,
        intra_threads: threads,
        det_max_side: ocr::DET_MAX_SIDE,
        machine_lock: None,
        tuning: ocr::OcrTuning::default(),
        tessdata: std::env::var_os("TESSDATA_PREFIX").map(Into::into),
    })
    .unwrap();
    let mut args = std::env::args().skip(1);
    let languages: Vec<String> = args.next().expect("LANG").split('+').map(str::to_owned).collect();
    for arg in args {
        let (path, dpi) = arg.rsplit_once(':').expect("IMAGE:DPI");
        let dpi: f32 = dpi.parse().expect("DPI is a number");
        let img = image::open(path).unwrap().to_luma8();
        let (w, h) = img.dimensions();
        let im = ocr::Image::new(w as usize, h as usize, 1, img.into_raw()).unwrap();
        // `None`: the layout `tesseract::layout_for` chooses (printed as "chosen").
        for layout in [Some(Layout::Tesseract), Some(Layout::Detector), None] {
            let t = Instant::now();
            let read = engine
                .recognise_tesseract(
                    &im,
                    &TessPage {
                        languages: &languages,
                        dpi,
                        timeout: Duration::from_secs(600),
                        cancel: &|| false,
                        layout,
                        osd: None,
                    },
                )
                .unwrap();
            let line = serde_json::json!({
                "image": path,
                "layout": layout.map_or("chosen".to_string(), |l| format!("{l:?}")),
                "ms": t.elapsed().as_millis() as u64,
                "text": read.page.text(),
            });
            println!("{line}");
        }
    }
}
