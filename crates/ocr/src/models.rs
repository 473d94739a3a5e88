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
    /// Every recogniser with the languages it reads, in manifest order; the first is
    /// [`rec`](Self::rec) with [`dict`](Self::dict) (the default).
    pub recognisers: Vec<RecogniserFiles>,
    /// The manifest's `openvino_runtime`: an ONNX Runtime library with OpenVINO's execution
    /// provider, loaded instead of [`crate::OcrConfig::ort_library`] when the file exists and
    /// [`crate::OcrTuning::openvino`] is on. `None` when the manifest has none.
    #[serde(default)]
    pub openvino_runtime: Option<PathBuf>,
}

/// A recognition model, its dictionary and the language codes it reads.
#[derive(Clone, Debug, Deserialize)]
pub struct RecogniserFiles {
    /// Manifest name of the model (`rec`, `rec_cjk`, ...).
    pub name: String,
    /// Engine name reported in results (`pp-ocrv6-tiny`, ...).
    pub engine: String,
    /// Tesseract-style codes of the languages its dictionary covers.
    pub languages: Vec<String>,
    /// The CTC recognition model.
    pub rec: ModelFile,
    /// Its dictionary.
    pub dict: ModelFile,
}

#[derive(Deserialize)]
struct ManifestEntry {
    name: String,
    file: String,
    sha256: String,
    /// Recognition models: the manifest name of their dictionary entry.
    #[serde(default)]
    dict: Option<String>,
    /// Recognition models: engine name reported in results.
    #[serde(default)]
    engine: Option<String>,
    /// Recognition models: language codes the dictionary covers.
    #[serde(default)]
    languages: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct RuntimeEntry {
    file: String,
}

#[derive(Deserialize)]
struct Manifest {
    #[serde(default)]
    openvino_runtime: Option<RuntimeEntry>,
    models: Vec<ManifestEntry>,
}

impl ModelFiles {
    /// Reads `models/manifest.json` (entries `det`, `rec`, `cls`, `dict`, with `file`
    /// relative to `root`, usually `node_modules`; and `openvino_runtime`, if any).
    pub fn from_manifest(manifest: &Path, root: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(manifest)
            .map_err(|e| OcrError::Init(format!("reading {}: {e}", manifest.display())))?;
        let m: Manifest =
            serde_json::from_str(&text).map_err(|e| OcrError::Init(format!("parsing {}: {e}", manifest.display())))?;
        let get = |name: &str| -> Result<ModelFile> {
            let e = m
                .models
                .iter()
                .find(|e| e.name == name)
                .ok_or_else(|| OcrError::Init(format!("manifest has no `{name}` entry")))?;
            Ok(ModelFile { path: root.join(&e.file), sha256: e.sha256.to_lowercase() })
        };
        // The default recogniser first, then the others in manifest order.
        let mut rec_entries: Vec<&ManifestEntry> = m.models.iter().filter(|e| e.languages.is_some()).collect();
        rec_entries.sort_by_key(|e| e.name != "rec");
        let mut recognisers = Vec::new();
        for e in rec_entries {
            let dict = e
                .dict
                .as_deref()
                .ok_or_else(|| OcrError::Init(format!("manifest entry `{}` has languages but no `dict`", e.name)))?;
            recognisers.push(RecogniserFiles {
                name: e.name.clone(),
                engine: e.engine.clone().unwrap_or_else(|| e.name.clone()),
                languages: e.languages.clone().unwrap_or_default(),
                rec: get(&e.name)?,
                dict: get(dict)?,
            });
        }
        let (rec, dict) = (get("rec")?, get("dict")?);
        if recognisers.first().map(|r| r.name.as_str()) != Some("rec") {
            // A manifest without language lists: the default recogniser reads what it reads.
            recognisers.insert(
                0,
                RecogniserFiles {
                    name: "rec".into(),
                    engine: "rec".into(),
                    languages: Vec::new(),
                    rec: rec.clone(),
                    dict: dict.clone(),
                },
            );
        }
        let openvino_runtime = m.openvino_runtime.map(|r| root.join(r.file));
        Ok(Self { det: get("det")?, rec, cls: get("cls")?, dict, recognisers, openvino_runtime })
    }
}

/// Reads a file and checks its SHA-256.
pub(crate) fn read_verified(f: &ModelFile) -> Result<Vec<u8>> {
    let bytes = std::fs::read(&f.path).map_err(|e| OcrError::Init(format!("reading {}: {e}", f.path.display())))?;
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

/// The process-wide ONNX Runtime environment (ONNX Runtime allows one), from the first of
/// `libs` that loads: a library that does not (a missing dependency of the OpenVINO build, say)
/// is passed over for the next, and the error names each.
pub(crate) fn environment(libs: &[&Path]) -> Result<ort::environment::Environment> {
    static ENV: std::sync::OnceLock<std::result::Result<ort::environment::Environment, String>> =
        std::sync::OnceLock::new();
    ENV.get_or_init(|| {
        let mut errors = Vec::new();
        for lib in libs {
            match ort::init_from(lib) {
                Ok(builder) => return builder.with_name("ocr").build().map_err(|e| e.to_string()),
                Err(e) => errors.push(format!("loading {}: {e}", lib.display())),
            }
        }
        Err(errors.join("; "))
    })
    .clone()
    .map_err(OcrError::Init)
}
