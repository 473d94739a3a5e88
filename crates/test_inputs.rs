//! Build-script part shared by the crates whose integration tests read third-party inputs
//! (crates/engine/build.rs, crates/ocr/build.rs include it with `#[path]`). It looks for
//! those inputs once, at build time, and tells the tests through cfgs, so that a test whose
//! inputs are missing is compiled with `#[ignore = "<why>"]` and cargo reports it as
//! ignored with the reason, never as passed:
//!
//! - `has_corpus`: every `files/` entry of test/corpus-manifest.tsv and MANIFEST.tsv are in
//!   the corpus directory;
//! - `has_ocr_corpus`: every `ocr/` entry too (three of them are converted pages that
//!   scripts/fetch-corpus.sh cannot download, so a fetched corpus has `has_corpus` only);
//! - `has_ocr_models`: ONNX Runtime and every model file of models/manifest.json are under
//!   node_modules (bun install, scripts/fetch-models.sh);
//! - `has_openvino`: the manifest's ONNX Runtime build with OpenVINO is there too;
//! - `has_tessdata_scripts`: Tesseract's traineddata of the script-family test pages
//!   ([`TESSDATA_SCRIPTS`]) and its orientation and script detection (`osd`) are installed
//!   (scripts/setup.sh), in `TESSDATA_PREFIX` or Debian's tessdata directory.
//!
//! The corpus directory is `CORPUS_DIR` when set (relative to the repository root), else the first of `<repo>/.corpus`
//! (where scripts/fetch-corpus.sh puts it) and `<repo>/../shared/corpus` that holds
//! `files/`. The tests read it from the `DOCPROC_CORPUS_DIR` environment variable set here at
//! compile time, so they look exactly where this check looked. test/support/service.ts
//! applies the same order for the Bun tests.
//!
//! Cargo reruns this check when `CORPUS_DIR` changes, when a directory it found changes, and
//! when this file changes; scripts/fetch-corpus.sh touches this file after a fetch, because a
//! directory that did not exist cannot be watched.
use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    manifest_dir.join("../..").canonicalize().expect("the repository root")
}

/// The corpus directory the tests use (which may not exist).
fn corpus_dir(root: &Path) -> PathBuf {
    if let Some(dir) = std::env::var_os("CORPUS_DIR").filter(|d| !d.is_empty()) {
        // A relative CORPUS_DIR is relative to the repository root, wherever cargo runs.
        return root.join(dir);
    }
    let candidates = [root.join(".corpus"), root.join("../shared/corpus")];
    candidates.iter().find(|d| d.join("files").is_dir()).unwrap_or(&candidates[0]).clone()
}

/// Whether every entry of test/corpus-manifest.tsv whose path starts with `prefix` exists in `dir`.
fn corpus_complete(root: &Path, dir: &Path, prefix: &str) -> bool {
    let list = std::fs::read_to_string(root.join("test/corpus-manifest.tsv")).expect("test/corpus-manifest.tsv");
    let mut any = false;
    for line in list.lines().skip(1) {
        let path = line.split('\t').next().unwrap_or("");
        if path.starts_with(prefix) {
            any = true;
            if !dir.join(path).is_file() {
                return false;
            }
        }
    }
    any
}

/// The `file` entries of models/manifest.json: (required ones, OpenVINO runtime).
fn model_files(manifest: &serde_json::Value) -> (Vec<String>, Option<String>) {
    let file = |v: &serde_json::Value| v.get("file").and_then(|f| f.as_str()).map(str::to_owned);
    let mut required: Vec<String> = manifest.get("runtime").and_then(file).into_iter().collect();
    for model in manifest.get("models").and_then(|m| m.as_array()).into_iter().flatten() {
        required.extend(file(model));
    }
    (required, manifest.get("openvino_runtime").and_then(file))
}

/// The traineddata the script-family tests read with (crates/script_pages.rs).
const TESSDATA_SCRIPTS: [&str; 8] = ["rus", "ell", "ara", "heb", "hin", "tha", "kor", "osd"];

/// The tessdata directory the engine will use (crates/ocr/src/tesseract/tessdata.rs).
fn tessdata_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("TESSDATA_PREFIX").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    ["/usr/share/tesseract-ocr/5/tessdata", "/usr/share/tesseract-ocr/4.00/tessdata"]
        .iter()
        .map(PathBuf::from)
        .find(|d| d.is_dir())
}

/// Watches `path` when it exists; for a missing file, its nearest existing directory below
/// `stop` (a watch on a missing path would rerun the build script on every build).
fn watch(path: &Path, stop: &Path) {
    let mut p = path;
    while !p.exists() {
        match p.parent() {
            Some(parent) if parent.starts_with(stop) && parent != stop => p = parent,
            _ => return,
        }
    }
    println!("cargo:rerun-if-changed={}", p.display());
}

/// Prints the cfgs and the rerun rules; called from the build script's `main`.
pub fn emit() {
    let root = repo_root();
    for cfg in ["has_corpus", "has_ocr_corpus", "has_ocr_models", "has_openvino", "has_tessdata_scripts"] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }
    println!("cargo:rerun-if-changed={}", root.join("crates/test_inputs.rs").display());
    println!("cargo:rerun-if-changed={}", root.join("test/corpus-manifest.tsv").display());
    println!("cargo:rerun-if-env-changed=CORPUS_DIR");
    println!("cargo:rerun-if-env-changed=TESSDATA_PREFIX");
    if let Some(dir) = tessdata_dir() {
        println!("cargo:rerun-if-changed={}", dir.display());
        if TESSDATA_SCRIPTS.iter().all(|l| dir.join(format!("{l}.traineddata")).is_file()) {
            println!("cargo:rustc-cfg=has_tessdata_scripts");
        }
    }

    let corpus = corpus_dir(&root);
    if corpus.is_dir() {
        println!("cargo:rerun-if-changed={}", corpus.display());
    }
    println!("cargo:rustc-env=DOCPROC_CORPUS_DIR={}", corpus.display());
    if corpus.join("MANIFEST.tsv").is_file() && corpus_complete(&root, &corpus, "files/") {
        println!("cargo:rustc-cfg=has_corpus");
        if corpus_complete(&root, &corpus, "ocr/") {
            println!("cargo:rustc-cfg=has_ocr_corpus");
        }
    }

    let manifest_path = root.join("models/manifest.json");
    println!("cargo:rerun-if-changed={}", manifest_path.display());
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest_path).expect("models/manifest.json"))
            .expect("models/manifest.json is JSON");
    let node_modules = root.join("node_modules");
    let (required, openvino) = model_files(&manifest);
    for f in required.iter().chain(&openvino) {
        watch(&node_modules.join(f), &node_modules);
    }
    if !required.is_empty() && required.iter().all(|f| node_modules.join(f).is_file()) {
        println!("cargo:rustc-cfg=has_ocr_models");
        if openvino.is_some_and(|f| node_modules.join(f).is_file()) {
            println!("cargo:rustc-cfg=has_openvino");
        }
    }
}
