//! ONNX Runtime and the models, loaded once per process and shared by every page.

use std::path::PathBuf;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::error::{EngineError, ErrorCode, Result};

/// Where the engine finds ONNX Runtime and the models (handed over once per process).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OcrInit {
    /// Path of `libonnxruntime.so.1`, used when the manifest's OpenVINO build is not
    /// (`ocr::OcrConfig::ort_library`).
    pub ort_library: PathBuf,
    /// `models/manifest.json`.
    pub manifest: PathBuf,
    /// Directory the manifest's `file` entries are relative to (`node_modules`).
    pub model_root: PathBuf,
    /// ONNX Runtime intra-op threads per model; default 1.
    #[serde(default = "one")]
    pub intra_threads: usize,
    /// Longest side of the detection input in pixels (default [`ocr::DET_MAX_SIDE`]).
    pub det_max_side: Option<usize>,
    /// File locked around every model run by every process on the machine (see
    /// [`ocr::OcrConfig::machine_lock`]); `None` runs without it.
    pub machine_lock: Option<PathBuf>,
    /// Settings for comparisons and diagnostics (default: what the service runs): settings
    /// of the process, never deserialized.
    #[serde(skip)]
    pub tuning: OcrTuning,
    /// Tesseract's traineddata directory; `None`: Debian's (`ocr::OcrConfig::tessdata`).
    pub tessdata: Option<PathBuf>,
}

const fn one() -> usize {
    1
}

pub use ocr::OcrTuning;

static OCR: OnceLock<ocr::Ocr> = OnceLock::new();
static INIT_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// An `ocr` crate error as the engine's: OCR unavailable, cancelled, timed out, or an engine error.
pub(super) fn ocr_failed(e: ocr::OcrError) -> EngineError {
    let code = match e {
        ocr::OcrError::Init(_) => ErrorCode::OcrUnavailable,
        ocr::OcrError::Cancelled => ErrorCode::Cancelled,
        ocr::OcrError::Timeout(_) => ErrorCode::OcrTimeout,
        _ => ErrorCode::EngineError,
    };
    EngineError::new(code, e.to_string())
}

/// Loads ONNX Runtime and the models (verifying their hashes). Idempotent: later calls
/// return at once.
pub fn ocr_init(init: &OcrInit) -> Result<()> {
    let _guard = INIT_LOCK.lock().map_err(|_| EngineError::new(ErrorCode::EngineError, "OCR init lock"))?;
    if OCR.get().is_some() {
        return Ok(());
    }
    let models = ocr::ModelFiles::from_manifest(&init.manifest, &init.model_root).map_err(ocr_failed)?;
    let engine = ocr::Ocr::new(&ocr::OcrConfig {
        ort_library: init.ort_library.clone(),
        models,
        intra_threads: init.intra_threads.max(1),
        det_max_side: init.det_max_side.unwrap_or(ocr::DET_MAX_SIDE),
        machine_lock: init.machine_lock.clone(),
        tuning: init.tuning.clone(),
        tessdata: init.tessdata.clone(),
    })
    .map_err(ocr_failed)?;
    let _ = OCR.set(engine);
    Ok(())
}

/// Whether [`ocr_init`] succeeded in this process.
pub fn ocr_ready() -> bool {
    OCR.get().is_some()
}

/// The engine [`ocr_init`] loaded, or `ocr_unavailable`.
pub(super) fn engine() -> Result<&'static ocr::Ocr> {
    OCR.get()
        .ok_or_else(|| EngineError::new(ErrorCode::OcrUnavailable, "OCR is not initialised in this process (ocrInit)"))
}
