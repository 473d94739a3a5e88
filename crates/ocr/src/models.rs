//! The model files: reading `models/manifest.json`, checking each file's SHA-256 before it
//! is loaded, and loading ONNX Runtime itself (once per process).

use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::{OcrError, Result};

/// One model file and its expected SHA-256 (hex).
#[derive(Clone, Debug, Deserialize)]
pub struct ModelFile {
    /// Path of the file.
    pub path: PathBuf,
    /// Lower-case hex SHA-256 the file must have.
    pub sha256: String,
}

/// The files the pipeline needs.
#[derive(Clone, Debug, Deserialize)]
pub struct ModelFiles {
    /// DB text detection model.
    pub det: ModelFile,
    /// CTC recognition model.
    pub rec: ModelFile,
    /// 0/180 text direction classifier.
    pub cls: ModelFile,
    /// Recognition dictionary, one character per line.
    pub dict: ModelFile,
}

#[derive(Deserialize)]
struct ManifestEntry {
    name: String,
    file: String,
    sha256: String,
}

#[derive(Deserialize)]
struct Manifest {
    models: Vec<ManifestEntry>,
}

impl ModelFiles {
    /// Reads `models/manifest.json` (entries `det`, `rec`, `cls`, `dict`, with `file`
    /// relative to `root`, usually `node_modules`).
    pub fn from_manifest(manifest: &Path, root: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(manifest)
            .map_err(|e| OcrError::Init(format!("reading {}: {e}", manifest.display())))?;
        let m: Manifest = serde_json::from_str(&text)
            .map_err(|e| OcrError::Init(format!("parsing {}: {e}", manifest.display())))?;
        let get = |name: &str| -> Result<ModelFile> {
            let e = m
                .models
                .iter()
                .find(|e| e.name == name)
                .ok_or_else(|| OcrError::Init(format!("manifest has no `{name}` entry")))?;
            Ok(ModelFile { path: root.join(&e.file), sha256: e.sha256.to_lowercase() })
        };
        Ok(Self { det: get("det")?, rec: get("rec")?, cls: get("cls")?, dict: get("dict")? })
    }
}

/// Reads a file and checks its SHA-256.
pub(crate) fn read_verified(f: &ModelFile) -> Result<Vec<u8>> {
    let bytes =
        std::fs::read(&f.path).map_err(|e| OcrError::Init(format!("reading {}: {e}", f.path.display())))?;
    let digest = Sha256::digest(&bytes);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    if hex != f.sha256 {
        return Err(OcrError::Init(format!(
            "{}: sha256 {hex} does not match the manifest ({})",
            f.path.display(),
            f.sha256
        )));
    }
    Ok(bytes)
}

/// The process-wide ONNX Runtime environment (ONNX Runtime allows one).
pub(crate) fn environment(lib: &Path) -> Result<ort::environment::Environment> {
    static ENV: std::sync::OnceLock<std::result::Result<ort::environment::Environment, String>> =
        std::sync::OnceLock::new();
    ENV.get_or_init(|| {
        let builder = ort::init_from(lib).map_err(|e| format!("loading {}: {e}", lib.display()))?;
        builder.with_name("ocr").build().map_err(|e| e.to_string())
    })
    .clone()
    .map_err(OcrError::Init)
}
