//! Process-wide engine settings, handed over once by the service (`configure`, called by
//! src/engine/native.ts with what src/config.ts parsed from the environment) and copied
//! into the engine's per-call options by the exports. The engine itself reads no
//! environment; neither does the addon.

use std::sync::OnceLock;

use engine::ocr::pipeline::OcrTuning;
use engine::pagework::compress::ImagePass;
use engine::pagework::render::JpegEncoder;
use napi::bindgen_prelude::*;
use napi_derive::napi;

/// What `configure` accepts; every field is optional, absent means the default (what the
/// service runs). All but `threads` exist for comparisons and diagnostics.
#[napi(object)]
pub struct EngineSettings {
    /// Engine threads of this process; default the number of cores.
    pub threads: Option<u32>,
    /// JPEG encoder of render and redact: `auto` (libjpeg-turbo when installed) or `rust`.
    #[napi(ts_type = "'auto' | 'rust'")]
    pub jpeg_encoder: Option<String>,
    /// compress: subset embedded fonts (default true).
    pub compress_subset_fonts: Option<bool>,
    /// compress: run the content guard after every lossy run (default false).
    pub compress_guard_always: Option<bool>,
    /// compress: who re-encodes images: `engine` (default), `mupdf`, `mupdf-inplace`.
    #[napi(ts_type = "'engine' | 'mupdf' | 'mupdf-inplace'")]
    pub compress_images: Option<String>,
    /// OCR: apply the exact model graph rewrites (default true).
    pub ocr_fuse: Option<bool>,
    /// OCR: horizontal scale of recognition crops (default 0.8).
    pub ocr_rec_squeeze: Option<f64>,
    /// OCR: recognition batches read side by side by single-threaded sessions (default true).
    pub ocr_rec_parallel: Option<bool>,
    /// OCR: the default recogniser on OpenVINO (true), on ONNX Runtime's kernels (false), or where the CPU has bfloat16 (absent).
    pub ocr_openvino: Option<bool>,
    /// OCR: narrowest recognition batch in pixels (default 160).
    pub ocr_rec_min_width: Option<u32>,
    /// OCR: per-stage times on stderr.
    pub ocr_timing: Option<bool>,
    /// OCR: every recognised line and dropped detection box on stderr.
    pub ocr_debug: Option<bool>,
}

/// The settings in the engine's types.
#[derive(Debug, Clone, Default)]
pub(crate) struct Settings {
    pub(crate) threads: Option<usize>,
    pub(crate) jpeg_encoder: JpegEncoder,
    pub(crate) compress_subset_fonts: bool,
    pub(crate) compress_guard_always: bool,
    pub(crate) compress_images: Option<ImagePass>,
    pub(crate) ocr: OcrTuning,
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();

/// The settings in force: those given to `configure`, else the defaults (fixed from the
/// first call on).
pub(crate) fn settings() -> &'static Settings {
    SETTINGS.get_or_init(|| Settings { compress_subset_fonts: true, ..Default::default() })
}

fn parse(s: EngineSettings) -> engine::Result<Settings> {
    let ocr_default = OcrTuning::default();
    Ok(Settings {
        threads: s.threads.filter(|&n| n > 0).map(|n| n as usize),
        jpeg_encoder: s.jpeg_encoder.as_deref().map(JpegEncoder::parse).transpose()?.unwrap_or_default(),
        compress_subset_fonts: s.compress_subset_fonts.unwrap_or(true),
        compress_guard_always: s.compress_guard_always.unwrap_or(false),
        compress_images: s.compress_images.as_deref().map(ImagePass::parse).transpose()?,
        ocr: OcrTuning {
            fuse: s.ocr_fuse.unwrap_or(ocr_default.fuse),
            rec_squeeze: s.ocr_rec_squeeze.map_or(ocr_default.rec_squeeze, |v| v as f32),
            rec_min_width: s.ocr_rec_min_width.map_or(ocr_default.rec_min_width, |v| v as usize),
            rec_parallel: s.ocr_rec_parallel.unwrap_or(ocr_default.rec_parallel),
            openvino: s.ocr_openvino.or(ocr_default.openvino),
            timing: s.ocr_timing.unwrap_or(false),
            debug: s.ocr_debug.unwrap_or(false),
        },
    })
}

/// Sets the process-wide settings. Returns false when they were already fixed (by an
/// earlier `configure` or by the first engine call, which uses the defaults); throws
/// `invalid_options` for an unknown encoder or image pass.
#[napi]
pub fn configure(settings: EngineSettings) -> Result<bool> {
    let parsed =
        parse(settings).map_err(|e| Error::new(Status::InvalidArg, format!("{}: {}", e.code.as_str(), e.message)))?;
    Ok(SETTINGS.set(parsed).is_ok())
}
