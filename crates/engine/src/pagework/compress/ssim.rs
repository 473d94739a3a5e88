//! Mean SSIM of two 8-bit images (8 x 8 windows, luma for colour), for the image pass's
//! choice between flate and JPEG for a losslessly stored image.
//!
//! The bench's quality figure is the same measure on renders; here it is taken on the
//! image's own pixels, before and after the JPEG round trip.

/// Mean SSIM over non-overlapping 8 x 8 windows of `a` and `b` (`w` x `h`, `comps` 1 or
/// 3 interleaved); 1.0 for identical images. Edge remnants narrower than a window are
/// left out; an image smaller than one window compares as a single window.
pub(crate) fn mean_ssim(a: &[u8], b: &[u8], w: u32, h: u32, comps: u32) -> f64 {
    let (w, h, c) = (w as usize, h as usize, comps as usize);
    let luma = |px: &[u8], i: usize| -> f64 {
        if c == 1 {
            px[i] as f64
        } else {
            let p = &px[i * c..i * c + 3];
            (77.0 * p[0] as f64 + 150.0 * p[1] as f64 + 29.0 * p[2] as f64) / 256.0
        }
    };
    let (c1, c2) = ((0.01f64 * 255.0).powi(2), (0.03f64 * 255.0).powi(2));
    let (bw, bh) = (w.min(8), h.min(8));
    let (mut total, mut n) = (0.0, 0usize);
    for y0 in (0..=h - bh).step_by(bh) {
        for x0 in (0..=w - bw).step_by(bw) {
            let (mut sa, mut sb, mut saa, mut sbb, mut sab) = (0.0, 0.0, 0.0, 0.0, 0.0);
            for y in y0..y0 + bh {
                for x in x0..x0 + bw {
                    let (p, q) = (luma(a, y * w + x), luma(b, y * w + x));
                    sa += p;
                    sb += q;
                    saa += p * p;
                    sbb += q * q;
                    sab += p * q;
                }
            }
            let k = (bw * bh) as f64;
            let (ma, mb) = (sa / k, sb / k);
            let (va, vb, cov) = (saa / k - ma * ma, sbb / k - mb * mb, sab / k - ma * mb);
            total += ((2.0 * ma * mb + c1) * (2.0 * cov + c2)) / ((ma * ma + mb * mb + c1) * (va + vb + c2));
            n += 1;
        }
    }
    if n == 0 {
        1.0
    } else {
        total / n as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_images_score_one_and_noise_scores_less() {
        let a: Vec<u8> = (0..64u32 * 48).map(|i| (i * 7 % 251) as u8).collect();
        assert!((mean_ssim(&a, &a, 64, 48, 1) - 1.0).abs() < 1e-9);
        let b: Vec<u8> = a.iter().enumerate().map(|(i, &v)| v.wrapping_add((i * 31 % 61) as u8)).collect();
        assert!(mean_ssim(&a, &b, 64, 48, 1) < 0.9);
    }
}
