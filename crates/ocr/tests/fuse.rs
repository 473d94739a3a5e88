//! The load-time graph rewrites (src/fuse) must leave every model computing the same
//! function: each model is run before and after on the same deterministic pseudo-random
//! input, and the outputs must agree to float rounding.
use std::path::{Path, PathBuf};

use ort::session::Session;
use ort::value::Tensor;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn models() -> ocr::ModelFiles {
    let r = root();
    ocr::ModelFiles::from_manifest(&r.join("models/manifest.json"), &r.join("node_modules")).unwrap()
}

/// ONNX Runtime allows one environment per process; the tests share it.
fn environment() -> &'static ort::environment::Environment {
    static ENV: std::sync::OnceLock<ort::environment::Environment> = std::sync::OnceLock::new();
    ENV.get_or_init(|| {
        let lib = root().join("node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1");
        ort::init_from(&lib).unwrap().with_name("fuse-test").build().unwrap()
    })
}

/// Values in [-1, 1) from a fixed linear congruential sequence.
fn input(n: usize) -> Vec<f32> {
    let mut s = 0x2545_f491u32;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (s >> 8) as f32 / (1u32 << 23) as f32 - 1.0
        })
        .collect()
}

fn run(env: &ort::environment::Environment, model: &[u8], shape: [usize; 4]) -> Vec<f32> {
    let mut session = Session::builder(env).unwrap().with_intra_threads(2).unwrap().commit_from_memory(model).unwrap();
    let data = input(shape.iter().product());
    let tensor = Tensor::from_array((shape, data)).unwrap();
    let outputs = session.run(ort::inputs![tensor]).unwrap();
    let (_, values) = outputs[0].try_extract_tensor::<f32>().unwrap();
    values.to_vec()
}

fn assert_same_function(name: &str, path: &Path, shape: [usize; 4], min_rewrites: usize) {
    let original = std::fs::read(path).unwrap();
    let (optimised, stats) = ocr::fuse::optimise(&original).unwrap();
    let rewrites = stats.total();
    assert!(rewrites >= min_rewrites, "{name}: only {rewrites} rewrites ({stats:?})");
    let env = environment();
    let a = run(env, &original, shape);
    let b = run(env, &optimised, shape);
    assert_eq!(a.len(), b.len(), "{name}: output sizes differ");
    let worst = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(0f32, f32::max);
    assert!(worst < 1e-3, "{name}: outputs differ by up to {worst}");
    eprintln!("{name}: {stats:?}, {} -> {} bytes, max difference {worst:e}", original.len(), optimised.len());
}

// The shipped PP-OCRv6 tiny detector was exported without the patterns the rewrites look
// for (0 rewrites): it must come out computing the same function all the same. The
// recognisers' heads run as 2-D Gemms (tiny: two linear layers, small: one); the direction
// classifier gets its hard-swish rewrites (18).
#[test]
#[cfg_attr(not(has_ocr_models), ignore = "OCR models missing: run scripts/setup.sh")]
fn rewritten_recogniser_computes_the_same_outputs() {
    assert_same_function("rec", &models().rec.path, [3, 3, 48, 320], 2);
}

#[test]
#[cfg_attr(not(has_ocr_models), ignore = "OCR models missing: run scripts/setup.sh")]
fn rewritten_language_recogniser_computes_the_same_outputs() {
    let m = models();
    let small = m.recognisers.iter().find(|r| r.name == "rec_cjk").expect("rec_cjk in the manifest");
    assert_same_function("rec_cjk", &small.rec.path, [2, 3, 48, 160], 1);
}

/// The head rewrite keeps the output's shape for any batch and width (N and T are read from
/// the features at run time, not fixed at load).
#[test]
#[cfg_attr(not(has_ocr_models), ignore = "OCR models missing: run scripts/setup.sh")]
fn rewritten_recogniser_keeps_its_output_shape_for_every_batch_shape() {
    let path = models().rec.path;
    let original = std::fs::read(&path).unwrap();
    let (optimised, stats) = ocr::fuse::optimise(&original).unwrap();
    assert_eq!(stats.head_as_gemm, 2);
    let env = environment();
    for shape in [[1, 3, 48, 160], [5, 3, 48, 232], [2, 3, 48, 1000]] {
        let a = run(env, &original, shape);
        let b = run(env, &optimised, shape);
        assert_eq!(a, b, "{shape:?}");
    }
}

#[test]
#[cfg_attr(not(has_ocr_models), ignore = "OCR models missing: run scripts/setup.sh")]
fn rewritten_detector_computes_the_same_outputs() {
    assert_same_function("det", &models().det.path, [1, 3, 320, 256], 0);
}

#[test]
#[cfg_attr(not(has_ocr_models), ignore = "OCR models missing: run scripts/setup.sh")]
fn rewritten_direction_classifier_computes_the_same_outputs() {
    assert_same_function("cls", &models().cls.path, [2, 3, 48, 192], 18);
}
