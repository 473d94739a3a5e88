//! A page read by the ONNX models ([`Ocr::recognise_with`]): detection, orientation,
//! recognition, quotes and reading order (the steps of the crate's "Pipeline").

use ort::value::Tensor;

use crate::assemble::assemble;
use crate::det::RotRect;
use crate::image::{Grey, Image};
use crate::page_text::PageText;
use crate::recognise::{probe_lines, Read};
use crate::timing::StageTimer;
use crate::{det, gutter, image, inference, quotes, Ocr, Result, DIRECTION_CHECK_BELOW, MAX_INPUT_SIDE};

impl Ocr {
    /// Recognises the text of an image with the default recogniser.
    pub fn recognise(&self, image: &Image) -> Result<PageText> {
        self.recognise_with(image, 0)
    }

    /// Recognises the text of an image with a recogniser chosen by
    /// [`recogniser_for`](Self::recogniser_for) (loaded at its first use).
    pub fn recognise_with(&self, image: &Image, recogniser: usize) -> Result<PageText> {
        let rec = self.recogniser(recogniser)?;
        let mut timer = StageTimer::new(self.tuning.timing);
        let mut grey = image.to_grey();
        let longest = grey.width.max(grey.height);
        let factor = longest.div_ceil(MAX_INPUT_SIDE).max(1);
        if factor > 1 {
            grey = grey.downscale(factor);
        }
        let scale_back = image.width as f32 / grey.width as f32;
        let scale_back_y = image.height as f32 / grey.height as f32;

        timer.mark("grey");
        // Detection.
        let rects = self.detect(&grey)?;

        // Orientation: 90 degrees?
        let elongated = rects.iter().filter(|r| r.w.max(r.h) >= 2.0 * r.w.min(r.h)).count();
        let tall = rects.iter().filter(|r| r.w.max(r.h) >= 2.0 * r.w.min(r.h) && r.h > r.w).count();
        let mut rotation: u32 = 0;
        let mut upright = grey;
        let mut rects = rects;
        if tall * 2 > elongated && tall > 0 {
            // The detector is trained on horizontal text: detect again on the turned page.
            upright = upright.rotate_cw(90);
            rects = self.detect(&upright)?;
            rotation = 90;
        }
        // Horizontal lines only (vertical text is not supported).
        rects.retain(|r| r.w >= 0.8 * r.h);
        timer.mark("orientation");
        // 0 / 180: the widest lines are read first, and only a page whose widest lines read
        // with low confidence is put to the direction classifier (text upside down reads as
        // garbage the recogniser is unsure of; running the classifier on every page cost time
        // and, on pages it misjudged, the whole page). Turned, the page must read its widest
        // lines more surely than upright, or it is read upright after all.
        let probe = &probe_lines(&rects)[..];
        let mut lines = match self.recognise_lines(&upright, &rects, &rec, Some((probe, DIRECTION_CHECK_BELOW)))? {
            Read::Done(lines) => lines,
            Read::Doubtful(upright_confidence) => {
                let mut turned = None;
                if self.vote_flip(&upright, &rects)? {
                    let (w, h) = (upright.width as f32, upright.height as f32);
                    let flipped: Vec<RotRect> =
                        rects.iter().map(|r| RotRect { cx: w - r.cx, cy: h - r.cy, ..*r }).collect();
                    let page = upright.rotate_cw(180);
                    if let Read::Done(lines) =
                        self.recognise_lines(&page, &flipped, &rec, Some((probe, upright_confidence)))?
                    {
                        turned = Some((page, lines));
                    }
                    timer.mark("rec.flipped");
                }
                match turned {
                    Some((page, lines)) => {
                        upright = page;
                        rotation = (rotation + 180) % 360;
                        lines
                    }
                    None => self.read_all(&upright, &rects, &rec)?,
                }
            }
        };
        timer.mark("rec");

        // Apostrophes and closing quotes in the page's quote style.
        quotes::apply(&mut lines);
        // Reading order in the upright frame, lines cut at column gutters, boxes deskewed.
        let (lines, order) = gutter::arrange(lines);

        let blocks = assemble(&lines, order, rotation, &upright, [scale_back, scale_back_y]);
        timer.mark("layout");
        Ok(PageText { width: image.width, height: image.height, rotation, blocks })
    }

    pub(crate) fn detect(&self, grey: &Grey) -> Result<Vec<RotRect>> {
        let mut timer = StageTimer::new(self.tuning.timing);
        let longest = grey.width.max(grey.height) as f32;
        let s = (self.det_max_side as f32 / longest).min(1.0);
        let round32 = |v: f32| (((v / 32.0).round() as usize) * 32).max(32);
        let dw = round32(grey.width as f32 * s);
        let dh = round32(grey.height as f32 * s);
        let pix = grey.resize(dw, dh);
        // Only the window that holds ink is detected (see [`image::ink_window`]); the
        // rectangles are mapped back by its offset.
        let Some((wx0, wy0, wx1, wy1)) = image::ink_window(&pix, dw, dh) else {
            timer.mark("det.prep blank");
            return Ok(Vec::new());
        };
        let (ww, wh) = (wx1 - wx0, wy1 - wy0);
        // PaddleOCR normalises BGR with ImageNet mean/std listed in RGB order; grey makes
        // the channel order moot apart from these constants.
        let mean = [0.485f32, 0.456, 0.406];
        let std = [0.229f32, 0.224, 0.225];
        let mut data = vec![0f32; 3 * ww * wh];
        for c in 0..3 {
            let plane = &mut data[c * ww * wh..(c + 1) * ww * wh];
            for (orow, irow) in plane.chunks_exact_mut(ww).zip(pix.chunks_exact(dw).skip(wy0)) {
                for (o, &v) in orow.iter_mut().zip(&irow[wx0..wx1]) {
                    *o = (v / 255.0 - mean[c]) / std[c];
                }
            }
        }
        let tensor = Tensor::from_array(([1usize, 3, wh, ww], data)).map_err(inference)?;
        timer.mark(&format!("det.prep {ww}x{wh} of {dw}x{dh}"));
        let (boxes, mw, mh) = self.run_model(&self.det, tensor, &mut timer, "det.run", |outputs| {
            let (shape, map) = outputs[0].try_extract_tensor::<f32>().map_err(inference)?;
            let (mh, mw) = (shape[2] as usize, shape[3] as usize);
            Ok((det::boxes_from_map(map, mw, mh, self.tuning.debug), mw, mh))
        })?;
        // Map pixels -> input pixels: the map covers the window at its own resolution.
        let sx = grey.width as f32 / dw as f32 * (ww as f32 / mw as f32);
        let sy = grey.height as f32 / dh as f32 * (wh as f32 / mh as f32);
        let (ox, oy) = (wx0 as f32 * grey.width as f32 / dw as f32, wy0 as f32 * grey.height as f32 / dh as f32);
        let rects = boxes
            .into_iter()
            .map(|b| {
                // Scale the rectangle: scale its corners, then refit.
                let c = b.rect.corners().map(|p| [ox + p[0] * sx, oy + p[1] * sy]);
                det::min_area_rect(&det::convex_hull(c.to_vec()))
            })
            .collect::<Vec<_>>();
        timer.mark(&format!("det.post {}", rects.len()));
        Ok(rects)
    }
}
