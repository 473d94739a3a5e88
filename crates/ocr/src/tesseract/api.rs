//! A safe handle on libtesseract's C API (`tesseract/capi.h`, through the `tesseract-sys`
//! bindings): one `TessBaseAPI` initialised for a language string, fed grey pixels, read back
//! as blocks, lines and words with boxes and confidences. A handle is used by one thread at a
//! time (`Send`, not `Sync`), as Tesseract requires.

use std::ffi::{c_int, c_void, CStr, CString};
use std::path::Path;
use std::time::{Duration, Instant};

use tesseract_sys as sys;

use crate::{OcrError, Result};

/// Tesseract's page segmentation modes used here (`tesseract::PageSegMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Segmentation {
    /// Its own layout analysis of the whole page (`PSM_AUTO`, 3).
    Page,
    /// One line of text (`PSM_SINGLE_LINE`, 7): our detector found the line.
    Line,
}

/// A word as Tesseract read it: text in logical order, box in image pixels.
#[derive(Clone, Debug, PartialEq)]
pub struct TessWord {
    /// UTF-8 text.
    pub text: String,
    /// 0-1.
    pub confidence: f32,
    /// `[x0, y0, x1, y1]`.
    pub bbox: [f32; 4],
}

/// A line: its words in reading order (right to left on a right-to-left line).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TessLine {
    /// `[x0, y0, x1, y1]`.
    pub bbox: [f32; 4],
    /// The line's text as Tesseract writes it: its words in logical order, with a space only
    /// where it saw one (the words of Thai are pieces of a run without spaces).
    pub text: String,
    /// Words.
    pub words: Vec<TessWord>,
}

/// A block of lines, in Tesseract's reading order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TessBlock {
    /// Lines.
    pub lines: Vec<TessLine>,
}

/// Orientation and script of a page (`TessBaseAPIDetectOrientationScript`).
#[derive(Clone, Debug, PartialEq)]
pub struct Osd {
    /// Clockwise degrees the page's text is turned by (0, 90, 180, 270): a page scanned
    /// turned a quarter clockwise is 90, and turning it on by 270 makes it upright.
    pub orientation: u32,
    /// Tesseract's confidence in the orientation (unbounded; above ~2 is sure).
    pub orientation_confidence: f32,
    /// Script name (`Latin`, `Cyrillic`, `Arabic`, `Han`, `Hangul`, ...).
    pub script: String,
    /// Tesseract's confidence in the script (unbounded; above ~1 is sure).
    pub script_confidence: f32,
}

/// Why a recognition stopped.
#[derive(Debug)]
pub enum Stopped {
    /// The deadline passed.
    Timeout(Duration),
    /// The caller's cancel check said so.
    Cancelled,
    /// Tesseract reported a failure.
    Failed(String),
}

/// One initialised `TessBaseAPI`.
pub struct TessApi {
    handle: *mut sys::TessBaseAPI,
    /// The language string it was initialised with (`rus+eng`).
    pub languages: String,
}

// Tesseract keeps no thread-local state for a handle; one thread at a time uses it (&mut).
unsafe impl Send for TessApi {}

impl Drop for TessApi {
    fn drop(&mut self) {
        unsafe {
            sys::TessBaseAPIEnd(self.handle);
            sys::TessBaseAPIDelete(self.handle);
        }
    }
}

fn c_string(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| OcrError::Init(format!("NUL in {s:?}")))
}

/// Called by Tesseract between words: whether to stop.
unsafe extern "C" fn cancel_check(this: *mut c_void, _words: c_int) -> bool {
    let check = &*(this as *const &dyn Fn() -> bool);
    check()
}

impl TessApi {
    /// Loads `languages` (Tesseract's `-l` form, `rus+eng`) from `tessdata` with the LSTM
    /// engine.
    pub fn new(tessdata: &Path, languages: &str) -> Result<Self> {
        let datapath = c_string(&tessdata.to_string_lossy())?;
        let lang = c_string(languages)?;
        let handle = unsafe { sys::TessBaseAPICreate() };
        if handle.is_null() {
            return Err(OcrError::Init("TessBaseAPICreate failed".into()));
        }
        let api = Self { handle, languages: languages.to_owned() };
        let oem = if languages == "osd" {
            sys::TessOcrEngineMode_OEM_TESSERACT_ONLY
        } else {
            sys::TessOcrEngineMode_OEM_LSTM_ONLY
        };
        let rc = unsafe { sys::TessBaseAPIInit2(handle, datapath.as_ptr(), lang.as_ptr(), oem) };
        if rc != 0 {
            return Err(OcrError::Init(format!("Tesseract could not load {languages} from {}", tessdata.display())));
        }
        // Its notes on resolution and empty pages go nowhere: stderr is the service's log.
        api.set("debug_file", "/dev/null")?;
        Ok(api)
    }

    fn set(&self, name: &str, value: &str) -> Result<()> {
        let (n, v) = (c_string(name)?, c_string(value)?);
        if unsafe { sys::TessBaseAPISetVariable(self.handle, n.as_ptr(), v.as_ptr()) } == 0 {
            return Err(OcrError::Init(format!("Tesseract has no variable {name}")));
        }
        Ok(())
    }

    /// Hands Tesseract a grey image (borrowed for the calls that follow, until the next
    /// `set_image` or `clear`) and its resolution.
    pub fn set_image(&mut self, data: &[u8], width: usize, height: usize, dpi: u32) {
        debug_assert_eq!(data.len(), width * height);
        unsafe {
            sys::TessBaseAPISetImage(self.handle, data.as_ptr(), width as c_int, height as c_int, 1, width as c_int);
            sys::TessBaseAPISetSourceResolution(self.handle, dpi.clamp(70, 2400) as c_int);
        }
    }

    /// Orientation and script of the image set (the handle must be initialised with `osd`).
    pub fn detect_orientation_script(&mut self) -> Option<Osd> {
        unsafe { sys::TessBaseAPISetPageSegMode(self.handle, sys::TessPageSegMode_PSM_OSD_ONLY) };
        let (mut deg, mut oconf, mut sconf) = (0 as c_int, 0f32, 0f32);
        let mut name: *const std::ffi::c_char = std::ptr::null();
        let ok = unsafe {
            sys::TessBaseAPIDetectOrientationScript(self.handle, &mut deg, &mut oconf, &mut name, &mut sconf)
        };
        if ok == 0 || name.is_null() {
            return None;
        }
        let script = unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned();
        Some(Osd {
            orientation: deg.rem_euclid(360) as u32,
            orientation_confidence: oconf,
            script,
            script_confidence: sconf,
        })
    }

    /// Recognises the image set (within `rect` `[x, y, w, h]` when given), stopping at
    /// `deadline` or when `cancel` says so, and returns its blocks.
    pub fn read(
        &mut self,
        mode: Segmentation,
        rect: Option<[usize; 4]>,
        timeout: Duration,
        cancel: &dyn Fn() -> bool,
    ) -> std::result::Result<Vec<TessBlock>, Stopped> {
        let psm = match mode {
            Segmentation::Page => sys::TessPageSegMode_PSM_AUTO,
            Segmentation::Line => sys::TessPageSegMode_PSM_SINGLE_LINE,
        };
        let start = Instant::now();
        let check: &dyn Fn() -> bool = &|| cancel() || start.elapsed() >= timeout;
        unsafe {
            sys::TessBaseAPISetPageSegMode(self.handle, psm);
            if let Some([x, y, w, h]) = rect {
                sys::TessBaseAPISetRectangle(self.handle, x as c_int, y as c_int, w as c_int, h as c_int);
            }
            let monitor = sys::TessMonitorCreate();
            sys::TessMonitorSetDeadlineMSecs(monitor, timeout.as_millis().min(i32::MAX as u128) as c_int);
            sys::TessMonitorSetCancelFunc(monitor, Some(cancel_check));
            sys::TessMonitorSetCancelThis(monitor, &check as *const &dyn Fn() -> bool as *mut c_void);
            let rc = sys::TessBaseAPIRecognize(self.handle, monitor);
            sys::TessMonitorDelete(monitor);
            if cancel() {
                return Err(Stopped::Cancelled);
            }
            if start.elapsed() >= timeout {
                return Err(Stopped::Timeout(timeout));
            }
            if rc != 0 {
                return Err(Stopped::Failed(format!("TessBaseAPIRecognize returned {rc}")));
            }
            Ok(self.blocks())
        }
    }

    /// The recognised words, grouped by block and line, in Tesseract's reading order.
    unsafe fn blocks(&mut self) -> Vec<TessBlock> {
        let ri = sys::TessBaseAPIGetIterator(self.handle);
        if ri.is_null() {
            return Vec::new();
        }
        let pi = sys::TessResultIteratorGetPageIterator(ri);
        let word = sys::TessPageIteratorLevel_RIL_WORD;
        let mut blocks: Vec<TessBlock> = Vec::new();
        loop {
            let text_ptr = sys::TessResultIteratorGetUTF8Text(ri, word);
            if !text_ptr.is_null() {
                let text = CStr::from_ptr(text_ptr).to_string_lossy().trim().to_owned();
                sys::TessDeleteText(text_ptr);
                if !text.is_empty() {
                    let new_block = sys::TessPageIteratorIsAtBeginningOf(pi, sys::TessPageIteratorLevel_RIL_BLOCK) != 0;
                    let new_line =
                        sys::TessPageIteratorIsAtBeginningOf(pi, sys::TessPageIteratorLevel_RIL_TEXTLINE) != 0;
                    if new_block || blocks.is_empty() {
                        blocks.push(TessBlock::default());
                    }
                    let block = blocks.last_mut().expect("a block");
                    if new_line || block.lines.is_empty() {
                        let line = sys::TessPageIteratorLevel_RIL_TEXTLINE;
                        let bbox = bounding_box(pi, line).unwrap_or_default();
                        let line_ptr = sys::TessResultIteratorGetUTF8Text(ri, line);
                        let text = if line_ptr.is_null() {
                            String::new()
                        } else {
                            let t = CStr::from_ptr(line_ptr).to_string_lossy().into_owned();
                            sys::TessDeleteText(line_ptr);
                            t
                        };
                        block.lines.push(TessLine { bbox, text, words: Vec::new() });
                    }
                    if let Some(bbox) = bounding_box(pi, word) {
                        let confidence = (sys::TessResultIteratorConfidence(ri, word) / 100.0).clamp(0.0, 1.0);
                        block.lines.last_mut().expect("a line").words.push(TessWord { text, confidence, bbox });
                    }
                }
            }
            if sys::TessResultIteratorNext(ri, word) == 0 {
                break;
            }
        }
        sys::TessResultIteratorDelete(ri);
        blocks.retain_mut(|b| {
            b.lines.retain(|l| !l.words.is_empty());
            !b.lines.is_empty()
        });
        blocks
    }

    /// Forgets the image and the results (the loaded languages stay).
    pub fn clear(&mut self) {
        unsafe { sys::TessBaseAPIClear(self.handle) }
    }
}

unsafe fn bounding_box(pi: *const sys::TessPageIterator, level: sys::TessPageIteratorLevel) -> Option<[f32; 4]> {
    let (mut l, mut t, mut r, mut b) = (0 as c_int, 0 as c_int, 0 as c_int, 0 as c_int);
    (sys::TessPageIteratorBoundingBox(pi, level, &mut l, &mut t, &mut r, &mut b) != 0)
        .then_some([l as f32, t as f32, r as f32, b as f32])
}
