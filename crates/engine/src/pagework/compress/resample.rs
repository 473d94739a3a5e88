//! Area-average downsampling, one source row at a time: every output pixel is the mean
//! of the source area it covers, edge pixels weighted by the fraction covered. For
//! downsampling this is the anti-aliased filter (no ringing, unlike bicubic), and it
//! streams: a 9000 x 9000 image never needs to be in memory whole.
//!
//! Fixed point: each axis' weights are integers summing to exactly [`ONE`] per output
//! pixel (from rounded cumulative positions), so sums are exact in `u32`
//! (255 x ONE x ONE < 2^32).

const SHIFT: u32 = 12;
const ONE: u32 = 1 << SHIFT;

/// Weights of one axis: source positions and weights, per output position.
struct Taps {
    /// `start[i]..start[i] + len[i]` are the source positions of output `i`.
    start: Vec<u32>,
    len: Vec<u32>,
    /// Index in `weights` of output `i`'s first weight.
    offset: Vec<u32>,
    /// All weights, concatenated in output order.
    weights: Vec<u32>,
}

impl Taps {
    /// Output position `i` covers `[i * src, (i + 1) * src)` in units where source
    /// position `k` covers `[k * dst, (k + 1) * dst)`.
    fn new(src: u32, dst: u32) -> Taps {
        let (s, d) = (src as u64, dst as u64);
        // Cumulative weight (in ONE units) of everything left of unit position p.
        let cum = |p: u64| -> u64 { (p * ONE as u64 + s / 2) / s };
        let mut t = Taps { start: Vec::new(), len: Vec::new(), offset: Vec::new(), weights: Vec::new() };
        for i in 0..d {
            t.offset.push(t.weights.len() as u32);
            let (lo, hi) = (i * s, (i + 1) * s);
            let first = lo / d;
            let last = (hi - 1) / d;
            t.start.push(first as u32);
            t.len.push((last - first + 1) as u32);
            for k in first..=last {
                let a = lo.max(k * d) - lo;
                let b = hi.min((k + 1) * d) - lo;
                t.weights.push((cum(b) - cum(a)) as u32);
            }
        }
        t
    }
}

/// Streams `src_w` x `src_h` rows of `comps` 8-bit samples into `dst_w` x `dst_h`
/// (each no larger than the source).
pub struct Downsampler {
    comps: usize,
    /// Horizontal factor when the source width is exactly a power-of-two multiple of
    /// the output's (equal weights: plain sums), else 0.
    pow2: usize,
    dst_w: usize,
    dst_h: usize,
    h: Taps,
    v: Taps,
    /// Added before the final shift: 0 (truncation) at exact power-of-two factors, half a
    /// level (rounding) otherwise, where the fixed-point weights carry their own error.
    half: u32,
    /// Horizontally reduced current row.
    row: Vec<u32>,
    /// Vertical sums of the output row being filled, and of the next one.
    acc: Vec<u32>,
    next: Vec<u32>,
    out: Vec<u8>,
    src_y: u32,
    dst_y: usize,
}

impl Downsampler {
    pub fn new(src_w: u32, src_h: u32, dst_w: u32, dst_h: u32, comps: u32) -> Downsampler {
        assert!(dst_w >= 1 && dst_h >= 1 && dst_w <= src_w && dst_h <= src_h);
        let n = dst_w as usize * comps as usize;
        let exact_factor = |src: u32, dst: u32| {
            let k = src / dst;
            if k * dst == src && k.is_power_of_two() && k <= ONE {
                k
            } else {
                0
            }
        };
        let pow2 = exact_factor(src_w, dst_w) as usize;
        Downsampler {
            comps: comps as usize,
            pow2,
            // Power-of-two factors on both axes: every weight is exact, so the sum is
            // exactly the mean times ONE x ONE.
            half: if pow2 != 0 && exact_factor(src_h, dst_h) != 0 { 0 } else { 1 << (2 * SHIFT - 1) },
            dst_w: dst_w as usize,
            dst_h: dst_h as usize,
            h: Taps::new(src_w, dst_w),
            v: Taps::new(src_h, dst_h),
            row: vec![0; n],
            acc: vec![0; n],
            next: vec![0; n],
            out: vec![0; n],
            src_y: 0,
            dst_y: 0,
        }
    }

    /// Rounds the means at every factor (for thresholds at half a level, where truncation
    /// would move exact ties).
    pub fn rounding(mut self) -> Downsampler {
        self.half = 1 << (2 * SHIFT - 1);
        self
    }

    /// Takes the next source row; calls `emit` with each output row it completes.
    pub fn push<E>(&mut self, src: &[u8], emit: &mut impl FnMut(&[u8]) -> Result<(), E>) -> Result<(), E> {
        self.reduce_row(src);
        let y = self.src_y;
        self.src_y += 1;
        // Source row y belongs to output rows j (and maybe j + 1) whose taps cover it.
        let mut off = 0usize;
        for j in self.dst_y..(self.dst_y + 2).min(self.dst_h) {
            let (start, len) = (self.v.start[j], self.v.len[j]);
            if y < start || y >= start + len {
                continue;
            }
            let w = self.v.weights[(self.v.offset[j] + y - start) as usize];
            let target = if j == self.dst_y { &mut self.acc } else { &mut self.next };
            for (a, &r) in target.iter_mut().zip(&self.row) {
                *a += r * w;
            }
            off += 1;
        }
        debug_assert!(off >= 1);
        // The current output row is complete after its last source row.
        let j = self.dst_y;
        if j < self.dst_h && y + 1 == self.v.start[j] + self.v.len[j] {
            // At power-of-two factors the mean is truncated, not rounded, as MuPDF's own
            // subsampling (fz_subsample_pixblock) and Ghostscript's average do: a viewer
            // that subsamples the original by the same factor then draws exactly the
            // pixels it draws from ours (scanned-typewriter-2400dpi.pdf and
            // enormous-page-size.pdf render identically at 100 dpi; rounded, pixels were
            // a level off: SSIM 0.99998).
            for (o, &a) in self.out.iter_mut().zip(&self.acc) {
                *o = ((a + self.half) >> (2 * SHIFT)) as u8;
            }
            std::mem::swap(&mut self.acc, &mut self.next);
            self.next.iter_mut().for_each(|a| *a = 0);
            self.dst_y += 1;
            emit(&self.out)?;
        }
        Ok(())
    }

    fn reduce_row(&mut self, src: &[u8]) {
        let c = self.comps;
        if self.pow2 > 0 {
            return reduce_pow2(src, &mut self.row, c, self.pow2);
        }
        for x in 0..self.dst_w {
            let (start, len) = (self.h.start[x] as usize, self.h.len[x] as usize);
            let wi = self.h.offset[x] as usize;
            let ws = &self.h.weights[wi..wi + len];
            let px = &src[start * c..(start + len) * c];
            if c == 1 {
                self.row[x] = px.iter().zip(ws).map(|(&p, &w)| p as u32 * w).sum();
            } else {
                let (mut r, mut g, mut b) = (0u32, 0u32, 0u32);
                for (p, &w) in px.chunks_exact(3).zip(ws) {
                    r += p[0] as u32 * w;
                    g += p[1] as u32 * w;
                    b += p[2] as u32 * w;
                }
                self.row[x * 3] = r;
                self.row[x * 3 + 1] = g;
                self.row[x * 3 + 2] = b;
            }
        }
    }
}

/// [`Downsampler::reduce_row`] for a width reduced exactly by `k`, a power of two: the
/// sums of `k` pixels times the common weight (the common 300 -> 150 dpi case; about 5x
/// faster than the general taps).
fn reduce_pow2(src: &[u8], row: &mut [u32], c: usize, k: usize) {
    let w = ONE / k as u32;
    if c == 1 {
        for (o, p) in row.iter_mut().zip(src.chunks_exact(k)) {
            *o = p.iter().map(|&v| v as u32).sum::<u32>() * w;
        }
    } else {
        for (o, p) in row.chunks_exact_mut(3).zip(src.chunks_exact(3 * k)) {
            let (mut r, mut g, mut b) = (0u32, 0u32, 0u32);
            for q in p.chunks_exact(3) {
                r += q[0] as u32;
                g += q[1] as u32;
                b += q[2] as u32;
            }
            o[0] = r * w;
            o[1] = g * w;
            o[2] = b * w;
        }
    }
}

/// Downsamples a whole packed image.
pub fn downsample(px: &[u8], w: u32, h: u32, dst_w: u32, dst_h: u32, comps: u32) -> Vec<u8> {
    let stride = w as usize * comps as usize;
    let mut out = Vec::with_capacity(dst_w as usize * dst_h as usize * comps as usize);
    let mut d = Downsampler::new(w, h, dst_w, dst_h, comps);
    for row in px.chunks_exact(stride).take(h as usize) {
        let _ = d.push::<()>(row, &mut |r| {
            out.extend_from_slice(r);
            Ok(())
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halving_averages_two_by_two_blocks() {
        // 4 x 2 grey -> 2 x 1: means of [10 20 / 30 40] and [0 255 / 255 0] (127.5,
        // truncated at a power-of-two factor as MuPDF and Ghostscript do).
        let px = [10, 20, 0, 255, 30, 40, 255, 0];
        assert_eq!(downsample(&px, 4, 2, 2, 1, 1), vec![25, 127]);
        // Not a power of two (3 x 1 -> 1 x 1): rounded.
        assert_eq!(downsample(&[0, 0, 1], 3, 1, 1, 1, 1), vec![0]);
        assert_eq!(downsample(&[0, 1, 1], 3, 1, 1, 1, 1), vec![1]);
    }

    #[test]
    fn a_flat_image_stays_flat_at_any_ratio() {
        let (w, h) = (97, 61);
        let px: Vec<u8> = std::iter::repeat_n([200u8, 17, 90], w * h).flatten().collect();
        for (dw, dh) in [(50, 31), (13, 60), (97, 61), (1, 1), (64, 7)] {
            let out = downsample(&px, w as u32, h as u32, dw, dh, 3);
            assert_eq!(out.len(), (dw * dh * 3) as usize);
            assert!(out.chunks_exact(3).all(|p| p == [200, 17, 90]), "{dw}x{dh}");
        }
    }

    #[test]
    fn the_power_of_two_path_matches_the_general_taps() {
        let (w, h) = (64u32, 8u32);
        let px: Vec<u8> = (0..w * h * 3).map(|i| (i * 37 % 256) as u8).collect();
        for k in [2u32, 4, 8] {
            let fast = downsample(&px, w, h, w / k, h / 2, 3);
            // The general taps for the same ratio, forced.
            let mut d = Downsampler::new(w, h, w / k, h / 2, 3);
            d.pow2 = 0;
            let mut slow = Vec::new();
            for row in px.chunks_exact((w * 3) as usize) {
                let _ = d.push::<()>(row, &mut |r| {
                    slow.extend_from_slice(r);
                    Ok(())
                });
            }
            assert_eq!(fast, slow, "k = {k}");
        }
    }

    #[test]
    fn fractional_ratio_weights_partial_pixels() {
        // 3 -> 2 horizontally: output 0 = (p0 + p1 / 2) / 1.5, output 1 = (p1 / 2 + p2) / 1.5.
        let px = [0u8, 90, 180];
        assert_eq!(downsample(&px, 3, 1, 2, 1, 1), vec![30, 150]);
    }

    #[test]
    fn every_output_row_is_emitted_once() {
        let (w, h) = (10u32, 1000u32);
        let px: Vec<u8> = (0..w * h).map(|i| (i / w % 251) as u8).collect();
        for dh in [1u32, 3, 333, 999, 1000] {
            assert_eq!(downsample(&px, w, h, 4, dh, 1).len(), (4 * dh) as usize);
        }
    }
}
