//! The second recogniser: Tesseract 5 (libtesseract, LSTM engine) for the languages the ONNX
//! recognisers do not read (Cyrillic, Greek, Arabic, Hebrew, Indic scripts, Thai, Korean, ...),
//! with the traineddata installed on the machine ([`tessdata`]).
//!
//! [`Tesseract`] keeps initialised handles ([`api::TessApi`]) between pages, keyed by their
//! language string (loading a traineddata costs 0.1-1 s), at most [`IDLE_HANDLES`] of them.
//! Its results become the same [`crate::PageText`] as the ONNX pipeline's, so the JSON, the
//! searchable PDF, progress, cancellation and billing do not depend on the engine
//! ([`crate::Ocr::recognise_tesseract`]).

pub mod api;
pub mod page;
pub mod script;
pub mod tessdata;
pub mod words;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use crate::{Grey, OcrError, Result};
pub use api::{Osd, Segmentation, Stopped, TessBlock, TessLine, TessWord};
pub use page::{layout_for, Layout, TessPage, TessRead, LEVEL_BELOW_DEGREES, TURN_FROM_CONFIDENCE};
pub use script::{guess_replaces_default, reader_for_script, ScriptReader, SCRIPT_SURE_FROM};

/// Initialised handles kept between pages (each holds its languages' models, 10-100 MB).
pub const IDLE_HANDLES: usize = 4;

/// Tesseract and the languages of its tessdata directory.
pub struct Tesseract {
    dir: PathBuf,
    languages: Vec<String>,
    osd: bool,
    /// Idle handles, the most recently used last.
    idle: Mutex<Vec<api::TessApi>>,
}

impl Tesseract {
    /// Tesseract over the tessdata directory ([`tessdata::tessdata_dir`] of `configured`);
    /// `None` when there is none or it holds no language.
    pub fn find(configured: Option<&Path>) -> Option<Self> {
        Self::at(&tessdata::tessdata_dir(configured)?)
    }

    /// Tesseract over `dir`; `None` when it holds no language.
    pub fn at(dir: &Path) -> Option<Self> {
        let languages = tessdata::installed_languages(dir);
        if languages.is_empty() {
            return None;
        }
        Some(Self { dir: dir.to_owned(), osd: tessdata::has_osd(dir), languages, idle: Mutex::new(Vec::new()) })
    }

    /// Installed languages, sorted.
    pub fn languages(&self) -> &[String] {
        &self.languages
    }

    /// Whether orientation and script detection is installed.
    pub fn has_osd(&self) -> bool {
        self.osd
    }

    /// libtesseract's version (`5.3.0`).
    pub fn version() -> String {
        let v = unsafe { std::ffi::CStr::from_ptr(tesseract_sys::TessVersion()) };
        v.to_string_lossy().into_owned()
    }

    /// Runs `f` with a handle for `languages` (`rus+eng`): an idle one, or a new one.
    pub fn with_handle<R>(&self, languages: &str, f: impl FnOnce(&mut api::TessApi) -> R) -> Result<R> {
        let taken = {
            let mut idle = self.idle.lock().map_err(|_| OcrError::Inference("poisoned".into()))?;
            idle.iter().rposition(|h| h.languages == languages).map(|i| idle.remove(i))
        };
        let mut handle = match taken {
            Some(h) => h,
            None => api::TessApi::new(&self.dir, languages)?,
        };
        let r = f(&mut handle);
        handle.clear();
        let mut idle = self.idle.lock().map_err(|_| OcrError::Inference("poisoned".into()))?;
        idle.push(handle);
        if idle.len() > IDLE_HANDLES {
            idle.remove(0);
        }
        Ok(r)
    }

    /// Orientation and script of a page; `None` without `osd.traineddata` or when Tesseract
    /// finds too little text to tell.
    pub fn orientation_script(&self, grey: &Grey, dpi: u32) -> Result<Option<Osd>> {
        if !self.osd {
            return Ok(None);
        }
        self.with_handle("osd", |h| {
            h.set_image(&grey.data, grey.width, grey.height, dpi);
            h.detect_orientation_script()
        })
    }

    /// Reads a page with Tesseract's own layout analysis ([`Segmentation::Page`]), or the
    /// given line boxes one by one ([`Segmentation::Line`], `[x, y, w, h]` each, in reading
    /// order; one block per line).
    pub fn read(
        &self,
        grey: &Grey,
        dpi: u32,
        languages: &[String],
        lines: Option<&[[usize; 4]]>,
        timeout: Duration,
        cancel: &dyn Fn() -> bool,
    ) -> Result<Vec<TessBlock>> {
        let joined = languages.join("+");
        let stopped = |s: Stopped| match s {
            Stopped::Timeout(t) => {
                OcrError::Timeout(format!("Tesseract did not finish the page within {} s", t.as_secs_f32()))
            }
            Stopped::Cancelled => OcrError::Cancelled,
            Stopped::Failed(m) => OcrError::Inference(m),
        };
        self.with_handle(&joined, |h| {
            h.set_image(&grey.data, grey.width, grey.height, dpi);
            match lines {
                None => h.read(Segmentation::Page, None, timeout, cancel).map_err(stopped),
                Some(rects) => {
                    let start = std::time::Instant::now();
                    let mut blocks = Vec::new();
                    for &rect in rects {
                        let left = timeout.saturating_sub(start.elapsed());
                        let read = h.read(Segmentation::Line, Some(rect), left, cancel).map_err(stopped)?;
                        let lines: Vec<TessLine> = read.into_iter().flat_map(|b| b.lines).collect();
                        let text = lines.iter().map(|l| l.text.trim()).collect::<Vec<_>>().join(" ");
                        let words: Vec<TessWord> = lines.into_iter().flat_map(|l| l.words).collect();
                        if !words.is_empty() {
                            let [x, y, w, ht] = rect.map(|v| v as f32);
                            blocks
                                .push(TessBlock { lines: vec![TessLine { bbox: [x, y, x + w, y + ht], text, words }] });
                        }
                    }
                    Ok(blocks)
                }
            }
        })?
    }
}
