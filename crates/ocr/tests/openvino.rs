//! OpenVINO's recogniser against ONNX Runtime's own kernels, in a test binary of its own:
//! ONNX Runtime is loaded once per process and the library loaded first is the one every
//! engine uses, so the comparison must load OpenVINO's build before any other test can load
//! the plain one (on a CPU without bfloat16 the default engine loads the plain one).
mod common;
use common::cer::{cer, corpus_pages, load, normalise};
use common::config;

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
