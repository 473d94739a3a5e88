//! What [`crate::Ocr::new`] is given: ONNX Runtime, the model files, threads, the machine
//! lock, and the settings kept for comparisons and diagnostics ([`OcrTuning`]).

use std::path::PathBuf;

use crate::{ModelFiles, REC_MIN_WIDTH, REC_SQUEEZE};

/// Engine configuration.
#[derive(Clone, Debug)]
pub struct OcrConfig {
    /// Path of `libonnxruntime.so.1`: used when the manifest's OpenVINO build is not
    /// (absent, not loadable, or [`OcrTuning::openvino`] off).
    pub ort_library: PathBuf,
    /// Model files.
    pub models: ModelFiles,
    /// ONNX Runtime intra-op threads per session.
    pub intra_threads: usize,
    /// Longest side of the detection input (pixels, rounded to a multiple of 32).
    pub det_max_side: usize,
    /// A file locked exclusively around every model run (created if missing); `None`
    /// runs models without it.
    pub machine_lock: Option<PathBuf>,
    /// Settings for comparisons and diagnostics; the defaults are what the service runs.
    pub tuning: OcrTuning,
    /// Tesseract's traineddata directory (the service's `TESSDATA_PREFIX`); `None`: Debian's
    /// ([`crate::tesseract::tessdata::tessdata_dir`]).
    pub tessdata: Option<PathBuf>,
}

/// Settings of [`OcrConfig`] for comparisons and diagnostics.
#[derive(Clone, Debug)]
pub struct OcrTuning {
    /// Apply the exact graph rewrites of [`crate::fuse`] before loading a model (a model
    /// they do not understand is loaded as it is); default true, false loads the models
    /// unchanged (the tests compare both).
    pub fuse: bool,
    /// Horizontal scale of the recognition crops; default [`REC_SQUEEZE`].
    pub rec_squeeze: f32,
    /// Narrowest recognition batch, in pixels; default [`REC_MIN_WIDTH`].
    pub rec_min_width: usize,
    /// With more than one thread, the default recogniser's batches are read side by side,
    /// each by a session of its own (one per thread, at most [`crate::REC_SESSIONS_MAX`]),
    /// instead of one after another by a session with every thread (default true; the same
    /// batches and reads either way). Language recognisers keep one session.
    pub rec_parallel: bool,
    /// Run the default recogniser on OpenVINO through the manifest's `openvino_runtime` library,
    /// when it is installed: `None` (the default) where the CPU runs bfloat16 (AVX512_BF16; the
    /// CPUs with AMX have it too), `Some(true)` everywhere (float32 without bfloat16),
    /// `Some(false)` never (`OCR_OPENVINO=1` / `0`). Without bfloat16 OpenVINO's float32 reads no
    /// faster than ONNX Runtime's kernels and its per-width warm-up makes a process's start
    /// several seconds longer (bench/REPORT.md, section `ocr`, both rows). One runtime per
    /// process: the library of the first engine created is the process's.
    pub openvino: Option<bool>,
    /// Per-stage times and recognition batches on stderr.
    pub timing: bool,
    /// Every recognised line and every dropped detection box on stderr.
    pub debug: bool,
}

impl Default for OcrTuning {
    fn default() -> Self {
        Self {
            fuse: true,
            rec_squeeze: REC_SQUEEZE,
            rec_min_width: REC_MIN_WIDTH,
            rec_parallel: true,
            openvino: None,
            timing: false,
            debug: false,
        }
    }
}
