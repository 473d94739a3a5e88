//! What the ocr crate's integration tests share: the repository root, the corpus folder, the
//! shipped models (models/manifest.json under node_modules) and an engine built from them.
#![allow(dead_code)] // each test file uses part of it

pub mod cer;

use std::path::{Path, PathBuf};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The corpus directory build.rs looked in (../test_inputs.rs: `CORPUS_DIR`, else
/// `<repo>/.corpus`, else ../shared/corpus beside the repository); the tests that read it are
/// `#[ignore]`d when the build did not find it (cfgs `has_corpus`, `has_ocr_corpus`).
pub fn corpus() -> PathBuf {
    PathBuf::from(env!("DOCPROC_CORPUS_DIR"))
}

/// A command for the reference tool `name`; panics, naming the tool, when it is not on
/// PATH, so that a check that needs it fails instead of passing unchecked.
pub fn tool(name: &str) -> std::process::Command {
    let found =
        std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()));
    assert!(found, "{name} is not installed (scripts/setup.sh installs it): this test checks with it");
    std::process::Command::new(name)
}

pub fn models() -> ocr::ModelFiles {
    let r = root();
    ocr::ModelFiles::from_manifest(&r.join("models/manifest.json"), &r.join("node_modules")).unwrap()
}

/// The shipped models with ONNX Runtime from node_modules, the default detection size and tuning.
pub fn config(intra_threads: usize, machine_lock: Option<PathBuf>) -> ocr::OcrConfig {
    ocr::OcrConfig {
        ort_library: root().join("node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"),
        models: models(),
        intra_threads,
        det_max_side: ocr::DET_MAX_SIDE,
        machine_lock,
        tuning: ocr::OcrTuning::default(),
        tessdata: std::env::var_os("TESSDATA_PREFIX").map(Into::into),
    }
}

/// An engine on 2 threads without the machine lock.
pub fn engine() -> ocr::Ocr {
    ocr::Ocr::new(&config(2, None)).unwrap()
}
