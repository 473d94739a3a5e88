//! A page read by Tesseract, as the same [`PageText`] the ONNX pipeline returns: turned
//! upright when orientation detection is sure, read with Tesseract's own layout analysis or
//! line by line from our detector's boxes ([`layout_for`], per script), words of unspaced scripts joined
//! ([`super::words`]), boxes back in input pixels.

use std::time::Duration;

use super::api::{Osd, TessBlock};
use super::words::{is_rtl_line, join_unspaced, separate};
use crate::assemble::assemble;
use crate::det::RotRect;
use crate::gutter::{RecLine, RecWord};
use crate::{Image, Ocr, OcrError, PageText, Result, Rotation, MAX_INPUT_SIDE};

/// Orientation confidence (Tesseract's OSD scale) from which a page is turned before it is
/// read: OSD reports about 1-2 on a sideways page with little text and well above 5 on a full
/// one; under it the page is read as it is.
pub const TURN_FROM_CONFIDENCE: f32 = 2.0;

/// How Tesseract finds the lines of a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Tesseract's own page segmentation (`PSM_AUTO`).
    Tesseract,
    /// Our detector's line boxes, each read by Tesseract as one line (`PSM_SINGLE_LINE`).
    Detector,
    /// [`Layout::Detector`] on a page whose lines are level (turned by under
    /// [`LEVEL_BELOW_DEGREES`]), [`Layout::Tesseract`] on a turned one.
    DetectorWhenLevel,
}

/// Median turn of the detected lines under which a page counts as level for
/// [`Layout::DetectorWhenLevel`]. A line box given to Tesseract is the upright envelope of the
/// detected line grown by a fifth of its height: a line 50 heights long turned by 0.3 degrees
/// climbs a quarter of its height, still inside; at the 0.5-2 degrees of a scan fed by hand
/// the envelope takes in pieces of the lines above and below, which Tesseract reads as part of
/// the line.
pub const LEVEL_BELOW_DEGREES: f32 = 0.3;

/// Scripts whose pages are read on our detector's lines, always or when level; every other
/// language is read with Tesseract's own layout. Measured on the tune half of the OCR language
/// set (pages at 150-300 dpi, turned 0.5-2 degrees, noisy; scripts/bench/ocr-tess-layout.ts;
/// docs/ocr.md, "Tesseract"): Tesseract's layout read every script better but Hangul (19.8%
/// against 10.6% CER: its page segmentation loses Hangul lines), since on a turned page each
/// of our upright line boxes takes in pieces of the neighbouring lines. On a level page our
/// lines read Thai better (3.1% against 9.9% CER on the clean test page, where Tesseract's
/// segmentation made a line of the upper vowel marks), and every other script as well.
const DETECTOR_SCRIPTS: [(&str, Layout); 2] = [("Hangul", Layout::Detector), ("Thai", Layout::DetectorWhenLevel)];

/// The layout used for `languages`: that of [`DETECTOR_SCRIPTS`] for the first language written
/// in one of its scripts, else Tesseract's own.
pub fn layout_for(languages: &[String]) -> Layout {
    languages
        .iter()
        .find_map(|l| {
            let script = super::script::script_of_language(l)?;
            DETECTOR_SCRIPTS.iter().find(|(s, _)| *s == script).map(|(_, layout)| *layout)
        })
        .unwrap_or(Layout::Tesseract)
}

/// What a Tesseract page read needs besides the pixels.
pub struct TessPage<'a> {
    /// Traineddata to read with.
    pub languages: &'a [String],
    /// The image's resolution (Tesseract scales its expectations of glyph sizes by it).
    pub dpi: f32,
    /// Time after which the page fails ([`OcrError::Timeout`]).
    pub timeout: Duration,
    /// Checked between words; true stops the page ([`OcrError::Cancelled`]).
    pub cancel: &'a dyn Fn() -> bool,
    /// `Some` overrides [`layout_for`] (for comparisons).
    pub layout: Option<Layout>,
    /// Orientation and script detection's verdict when the caller has it already
    /// ([`Ocr::detect_script`]); otherwise it runs here (when installed).
    pub osd: Option<Osd>,
}

/// The result of [`Ocr::recognise_tesseract`]: the page and what orientation detection said.
pub struct TessRead {
    /// The text.
    pub page: PageText,
    /// Orientation and script detection's verdict, when it ran.
    pub osd: Option<Osd>,
}

impl Ocr {
    /// Orientation and script of an image (Tesseract OSD); `None` when `osd.traineddata` is not
    /// installed or the page has too little text to tell.
    pub fn detect_script(&self, image: &Image, dpi: f32) -> Result<Option<Osd>> {
        let Some(tess) = self.tesseract.as_ref().filter(|t| t.has_osd()) else { return Ok(None) };
        let mut grey = image.to_grey();
        let factor = grey.width.max(grey.height).div_ceil(MAX_INPUT_SIDE).max(1);
        if factor > 1 {
            grey = grey.downscale(factor);
        }
        tess.orientation_script(&grey, (dpi / factor as f32).round() as u32)
    }

    /// Whether pages read without `languages` can have their script detected
    /// ([`Ocr::detect_script`]).
    pub fn detects_scripts(&self) -> bool {
        self.tesseract.as_ref().is_some_and(|t| t.has_osd())
    }

    /// The reader for a page of unknown languages whose script detection said `osd` (its best
    /// guess, sure or not; [`super::script::reader_for_script`]).
    pub fn reader_for_script(&self, osd: &Osd) -> crate::Reader {
        match super::script::reader_for_script(&osd.script, self.tesseract_languages()) {
            super::script::ScriptReader::Default => crate::Reader::Model(0),
            super::script::ScriptReader::Languages(codes) => {
                self.reader_for(Some(&codes)).unwrap_or(crate::Reader::Model(0))
            }
        }
    }

    /// Reads an image with Tesseract (installed traineddata; see [`Ocr::reader_for`]).
    pub fn recognise_tesseract(&self, image: &Image, read: &TessPage<'_>) -> Result<TessRead> {
        let tess = self
            .tesseract
            .as_ref()
            .ok_or_else(|| OcrError::Init("Tesseract has no traineddata installed on this machine".into()))?;
        let mut grey = image.to_grey();
        let factor = grey.width.max(grey.height).div_ceil(MAX_INPUT_SIDE).max(1);
        if factor > 1 {
            grey = grey.downscale(factor);
        }
        let dpi = (read.dpi / factor as f32).round() as u32;
        let scale_back = [image.width as f32 / grey.width as f32, image.height as f32 / grey.height as f32];
        if (read.cancel)() {
            return Err(OcrError::Cancelled);
        }
        let osd = match &read.osd {
            Some(o) => Some(o.clone()),
            None => tess.orientation_script(&grey, dpi)?,
        };
        let rotation: Rotation = match &osd {
            // OSD gives the clockwise turn the page's text has; turning on to 360 undoes it.
            Some(o) if o.orientation_confidence >= TURN_FROM_CONFIDENCE => (360 - o.orientation) % 360,
            _ => 0,
        };
        let upright = if rotation == 0 { grey } else { grey.rotate_cw(rotation) };
        let layout = read.layout.unwrap_or_else(|| layout_for(read.languages));
        // Tesseract's recognition holds the machine lock like a model run (Debian's libtesseract
        // runs OpenMP threads); the detector takes it for its own run first.
        let rects = match layout {
            Layout::Tesseract => None,
            Layout::Detector | Layout::DetectorWhenLevel => {
                let mut rects = self.detect(&upright)?;
                rects.retain(|r| r.w >= 0.8 * r.h);
                let level = || {
                    let mut turns: Vec<f32> = rects.iter().map(|r| r.angle.abs()).collect();
                    turns.sort_by(f32::total_cmp);
                    turns.get(turns.len() / 2).is_none_or(|t| t.to_degrees() < LEVEL_BELOW_DEGREES)
                };
                (layout == Layout::Detector || level()).then_some(rects)
            }
        };
        let (lines, order) = match rects {
            // Tesseract's lines, put in reading order by the same XY-cut as ours and the ONNX
            // path's (the text layer is laid out for pdftotext to read that order back; in
            // Tesseract's block order pdftotext read the Devanagari corpus scan's layer further
            // out of the JSON's order: 55 words against 39, text_layer_corpus.rs).
            None => {
                let run = self.machine_run()?;
                let blocks = tess.read(&upright, dpi, read.languages, None, read.timeout, read.cancel)?;
                drop(run);
                let (lines, _) = lines_in_blocks(blocks);
                crate::gutter::arrange(lines)
            }
            Some(rects) => {
                let boxes: Vec<[usize; 4]> = rects.iter().filter_map(|r| line_box(r, &upright)).collect();
                let run = self.machine_run()?;
                let blocks = tess.read(&upright, dpi, read.languages, Some(&boxes), read.timeout, read.cancel)?;
                drop(run);
                let (lines, _) = lines_in_blocks(blocks);
                crate::gutter::arrange(lines)
            }
        };
        let blocks = assemble(&lines, order, rotation, &upright, scale_back);
        Ok(TessRead { page: PageText { width: image.width, height: image.height, rotation, blocks }, osd })
    }
}

/// A detected line's upright envelope as `[x, y, w, h]`, grown by a fifth of its height on
/// every side (Tesseract finds the text inside; a tight box clips accents and descenders) and
/// kept inside the page.
fn line_box(r: &RotRect, page: &crate::Grey) -> Option<[usize; 4]> {
    let e = r.envelope();
    let m = r.h.min(r.w) * 0.2;
    let x0 = (e[0] - m).max(0.0) as usize;
    let y0 = (e[1] - m).max(0.0) as usize;
    let x1 = ((e[2] + m) as usize).min(page.width);
    let y1 = ((e[3] + m) as usize).min(page.height);
    (x1 > x0 + 2 && y1 > y0 + 2).then(|| [x0, y0, x1 - x0, y1 - y0])
}

fn rect_of(b: [f32; 4]) -> RotRect {
    RotRect { cx: (b[0] + b[2]) / 2.0, cy: (b[1] + b[3]) / 2.0, w: b[2] - b[0], h: b[3] - b[1], angle: 0.0 }
}

/// Tesseract's blocks as the pipeline's lines and their order (line indexes per block), the
/// words of unspaced scripts joined.
fn lines_in_blocks(blocks: Vec<TessBlock>) -> (Vec<RecLine>, Vec<Vec<usize>>) {
    let mut lines = Vec::new();
    let mut order = Vec::new();
    for block in blocks {
        let mut ids = Vec::new();
        for line in block.lines {
            let mut words = join_unspaced(line.words, &line.text);
            let rtl = is_rtl_line(&words);
            separate(&mut words, line.bbox[3] - line.bbox[1], rtl);
            let n: usize = words.iter().map(|w| w.text.chars().count()).sum();
            let confidence =
                words.iter().map(|w| w.confidence * w.text.chars().count() as f32).sum::<f32>() / n.max(1) as f32;
            let rec_words: Vec<RecWord> =
                words.into_iter().map(|w| (w.text, w.confidence, rect_of(w.bbox), Vec::new())).collect();
            ids.push(lines.len());
            lines.push((rect_of(line.bbox), rec_words, confidence));
        }
        if !ids.is_empty() {
            order.push(ids);
        }
    }
    (lines, order)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn korean_is_read_on_our_lines_thai_on_them_when_level_and_the_rest_with_tesseract_layout() {
        assert_eq!(layout_for(&codes(&["kor"])), Layout::Detector);
        assert_eq!(layout_for(&codes(&["eng", "kor"])), Layout::Detector);
        assert_eq!(layout_for(&codes(&["script/Hangul"])), Layout::Detector);
        assert_eq!(layout_for(&codes(&["tha"])), Layout::DetectorWhenLevel);
        for l in ["rus", "ara", "heb", "hin", "tam", "cym", "script/Cyrillic"] {
            assert_eq!(layout_for(&codes(&[l])), Layout::Tesseract, "{l}");
        }
    }
}
