//! Pixel buffers: 8-bit grey or RGB, row-major, no padding.

use crate::{OcrError, Result};

/// An 8-bit image, 1 (grey) or 3 (RGB) channels, rows packed without padding.
#[derive(Clone, Debug)]
pub struct Image {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// 1 (grey) or 3 (RGB).
    pub channels: usize,
    /// `width * height * channels` bytes.
    pub data: Vec<u8>,
}

impl Image {
    /// Wraps a buffer, checking its size.
    pub fn new(width: usize, height: usize, channels: usize, data: Vec<u8>) -> Result<Self> {
        if channels != 1 && channels != 3 {
            return Err(OcrError::Input(format!("{channels} channels (1 or 3 expected)")));
        }
        if width == 0 || height == 0 || data.len() != width * height * channels {
            return Err(OcrError::Input(format!("buffer of {} bytes for {width}x{height}x{channels}", data.len())));
        }
        Ok(Self { width, height, channels, data })
    }

    /// Converts to grey (luma, Rec. 601 weights); the pipeline runs on grey pixels.
    pub fn to_grey(&self) -> Grey {
        if self.channels == 1 {
            return Grey { width: self.width, height: self.height, data: self.data.clone() };
        }
        let data = self
            .data
            .chunks_exact(3)
            .map(|p| ((p[0] as u32 * 299 + p[1] as u32 * 587 + p[2] as u32 * 114 + 500) / 1000) as u8)
            .collect();
        Grey { width: self.width, height: self.height, data }
    }
}

/// A grey image (the models see the same value in all three channels).
#[derive(Clone, Debug)]
pub struct Grey {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// `width * height` bytes.
    pub data: Vec<u8>,
}

impl Grey {
    #[inline]
    pub(crate) fn at(&self, x: usize, y: usize) -> u8 {
        self.data[y * self.width + x]
    }

    /// Bilinear sample at a continuous position (pixel centres at +0.5), white outside.
    #[inline]
    pub(crate) fn sample(&self, x: f32, y: f32) -> f32 {
        let fx = x - 0.5;
        let fy = y - 0.5;
        let x0 = fx.floor();
        let y0 = fy.floor();
        let ax = fx - x0;
        let ay = fy - y0;
        let (x0, y0) = (x0 as isize, y0 as isize);
        let get = |xx: isize, yy: isize| -> f32 {
            if xx < 0 || yy < 0 || xx >= self.width as isize || yy >= self.height as isize {
                255.0
            } else {
                self.at(xx as usize, yy as usize) as f32
            }
        };
        let a = get(x0, y0) * (1.0 - ax) + get(x0 + 1, y0) * ax;
        let b = get(x0, y0 + 1) * (1.0 - ax) + get(x0 + 1, y0 + 1) * ax;
        a * (1.0 - ay) + b * ay
    }

    /// [`sample`](Self::sample) for a position at least one pixel inside the image (no
    /// edge handling: the crop of a line clear of the border, the common case).
    #[inline]
    pub(crate) fn sample_inside(&self, x: f32, y: f32) -> f32 {
        let fx = x - 0.5;
        let fy = y - 0.5;
        let (x0, y0) = (fx as usize, fy as usize);
        let (ax, ay) = (fx - x0 as f32, fy - y0 as f32);
        let i = y0 * self.width + x0;
        let row0 = &self.data[i..i + 2];
        let row1 = &self.data[i + self.width..i + self.width + 2];
        let a = row0[0] as f32 + (row0[1] as f32 - row0[0] as f32) * ax;
        let b = row1[0] as f32 + (row1[1] as f32 - row1[0] as f32) * ax;
        a + (b - a) * ay
    }

    /// Rotates clockwise by 0, 90, 180 or 270 degrees.
    pub fn rotate_cw(&self, degrees: u32) -> Grey {
        let (w, h) = (self.width, self.height);
        match degrees % 360 {
            90 => {
                let mut out = vec![0u8; w * h];
                // out is h wide, w high: out(xu, yu) = in(yu, h-1-xu)
                for yu in 0..w {
                    for xu in 0..h {
                        out[yu * h + xu] = self.data[(h - 1 - xu) * w + yu];
                    }
                }
                Grey { width: h, height: w, data: out }
            }
            180 => {
                let mut data = self.data.clone();
                data.reverse();
                Grey { width: w, height: h, data }
            }
            270 => {
                let mut out = vec![0u8; w * h];
                // out(xu, yu) = in(w-1-yu, xu)
                for yu in 0..w {
                    for xu in 0..h {
                        out[yu * h + xu] = self.data[xu * w + (w - 1 - yu)];
                    }
                }
                Grey { width: h, height: w, data: out }
            }
            _ => self.clone(),
        }
    }

    /// Area-average downscale by an integer factor (used to cap huge inputs cheaply).
    pub fn downscale(&self, factor: usize) -> Grey {
        if factor <= 1 {
            return self.clone();
        }
        let w = self.width / factor;
        let h = self.height / factor;
        let (w, h) = (w.max(1), h.max(1));
        let mut data = vec![0u8; w * h];
        let n = (factor * factor) as u32;
        for y in 0..h {
            for x in 0..w {
                let mut s = 0u32;
                for dy in 0..factor {
                    let row = ((y * factor + dy).min(self.height - 1)) * self.width;
                    for dx in 0..factor {
                        s += self.data[row + (x * factor + dx).min(self.width - 1)] as u32;
                    }
                }
                data[y * w + x] = (s / n) as u8;
            }
        }
        Grey { width: w, height: h, data }
    }

    /// Resizes to exactly `w` x `h` (area average when shrinking, bilinear otherwise).
    pub(crate) fn resize(&self, w: usize, h: usize) -> Vec<f32> {
        let sx = self.width as f32 / w as f32;
        let sy = self.height as f32 / h as f32;
        let mut out = vec![0f32; w * h];
        if sx <= 1.0 && sy <= 1.0 {
            for y in 0..h {
                for x in 0..w {
                    out[y * w + x] = self.sample((x as f32 + 0.5) * sx, (y as f32 + 0.5) * sy);
                }
            }
            return out;
        }
        // Box filter, separable: each source row is summed over every output column's
        // footprint once, then the rows of each output row's footprint are added (the same
        // integer sums as averaging every footprint directly, for about one pass over the
        // source instead of one per overlapping footprint, and no per-pixel bounds).
        let xs: Vec<(usize, usize)> = (0..w)
            .map(|x| {
                let x0 = (x as f32 * sx) as usize;
                (x0, (((x + 1) as f32 * sx).ceil() as usize).clamp(x0 + 1, self.width))
            })
            .collect();
        let mut rows = vec![0u32; w * self.height];
        for (src, dst) in self.data.chunks_exact(self.width).zip(rows.chunks_exact_mut(w)) {
            for (d, &(x0, x1)) in dst.iter_mut().zip(&xs) {
                *d = src[x0..x1].iter().map(|&v| v as u32).sum();
            }
        }
        let mut acc = vec![0u32; w];
        for y in 0..h {
            let y0 = (y as f32 * sy) as usize;
            let y1 = (((y + 1) as f32 * sy).ceil() as usize).clamp(y0 + 1, self.height);
            acc.iter_mut().for_each(|a| *a = 0);
            for row in rows.chunks_exact(w).take(y1).skip(y0) {
                for (a, &v) in acc.iter_mut().zip(row) {
                    *a += v;
                }
            }
            for ((o, &a), &(x0, x1)) in out[y * w..(y + 1) * w].iter_mut().zip(&acc).zip(&xs) {
                *o = a as f32 / ((y1 - y0) * (x1 - x0)) as f32;
            }
        }
        out
    }
}

/// Levels under the paper's grey from which a pixel of the detection input counts as ink.
pub(crate) const INK_DELTA: f32 = 40.0;
/// Margin around the ink kept in the detection window, in detection-input pixels.
pub(crate) const INK_MARGIN: usize = 64;

/// The window `(x0, y0, x1, y1)` of a detection input (`w` x `h` grey levels, both multiples
/// of 32) that holds everything darker than the paper, grown by [`INK_MARGIN`] and rounded
/// outwards to multiples of 32 (the detector's stride); `None` when nothing is (a blank
/// page). The paper's grey is the 90th percentile of the levels, so a dark surround (a
/// receipt photographed on a table) or a tinted box counts as ink and stays in the window:
/// only near-paper margins are cut. Why: the detector's time is proportional to its input's
/// area, and a page's margins are a large part of it.
pub(crate) fn ink_window(pix: &[f32], w: usize, h: usize) -> Option<(usize, usize, usize, usize)> {
    let mut hist = [0usize; 256];
    for &v in pix {
        hist[(v as usize).min(255)] += 1;
    }
    let (mut seen, mut paper) = (0usize, 255usize);
    for (level, &n) in hist.iter().enumerate() {
        seen += n;
        if seen * 10 >= pix.len() * 9 {
            paper = level;
            break;
        }
    }
    let ink = paper as f32 - INK_DELTA;
    let (mut x0, mut y0, mut x1, mut y1) = (usize::MAX, usize::MAX, 0usize, 0usize);
    for (y, row) in pix.chunks_exact(w).enumerate().take(h) {
        let Some(first) = row.iter().position(|&v| v < ink) else { continue };
        let last = row.iter().rposition(|&v| v < ink).unwrap_or(first);
        x0 = x0.min(first);
        x1 = x1.max(last + 1);
        y0 = y0.min(y);
        y1 = y + 1;
    }
    if x0 == usize::MAX {
        return None;
    }
    let down = |v: usize| v.saturating_sub(INK_MARGIN) / 32 * 32;
    let up = |v: usize, max: usize| ((v + INK_MARGIN).div_ceil(32) * 32).min(max);
    Some((down(x0), down(y0), up(x1, w), up(y1, h)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The separable box filter gives what averaging each output pixel's footprint gives.
    #[test]
    fn separable_downscale_equals_the_direct_footprint_average() {
        let (sw, sh) = (317usize, 211usize);
        let data: Vec<u8> = (0..sw * sh).map(|i| ((i * 7919) % 251) as u8).collect();
        let g = Grey { width: sw, height: sh, data };
        let (w, h) = (96usize, 64usize);
        let out = g.resize(w, h);
        let (sx, sy) = (sw as f32 / w as f32, sh as f32 / h as f32);
        for y in 0..h {
            let y0 = (y as f32 * sy) as usize;
            let y1 = (((y + 1) as f32 * sy).ceil() as usize).clamp(y0 + 1, sh);
            for x in 0..w {
                let x0 = (x as f32 * sx) as usize;
                let x1 = (((x + 1) as f32 * sx).ceil() as usize).clamp(x0 + 1, sw);
                let s: u32 =
                    (y0..y1).flat_map(|yy| (x0..x1).map(move |xx| (yy, xx))).map(|(yy, xx)| g.at(xx, yy) as u32).sum();
                assert_eq!(out[y * w + x], s as f32 / ((y1 - y0) * (x1 - x0)) as f32, "({x}, {y})");
            }
        }
    }

    /// The window holds the ink with its margin, in multiples of 32; a dark speck far from
    /// the text stays in it (never cut what is not paper); a blank page has none.
    #[test]
    fn ink_window_keeps_everything_darker_than_the_paper_and_cuts_the_margins() {
        let (w, h) = (320usize, 256usize);
        let mut pix = vec![250f32; w * h];
        for y in 100..110 {
            for x in 90..200 {
                pix[y * w + x] = 20.0;
            }
        }
        assert_eq!(ink_window(&pix, w, h), Some((0, 32, 288, 192)));
        pix[250 * w + 310] = 180.0;
        assert_eq!(ink_window(&pix, w, h), Some((0, 32, 320, 256)));
        assert_eq!(ink_window(&vec![250f32; w * h], w, h), None);
    }
}
