//! JPEG (DCT) images in the engine's image pass: decoded by libjpeg-turbo scaled in the
//! DCT domain (to a DCT scale of the target when one lands close enough, [`dct_size`]),
//! finished by an area average, and encoded again as progressive JPEG ([`JPEG_FLAGS`]).

use std::io::Read;

use super::ffi::{Coding, ImageInfo};
use super::jpeg;
use super::resample::downsample;
use super::ImageSettings;

/// JPEG output: progressive (optimised Huffman tables). Measured on the 50-page photo
/// set at balanced (load ~4, 3 interleaved runs): baseline 4.10 MB in 0.26-0.33 s,
/// baseline with optimised tables 4.04 MB in 0.32-0.38 s, progressive 3.82 MB in
/// 0.43-0.60 s: 5-7% smaller for about 0.1 s, while the time goal (half of Ghostscript's)
/// is met with room and the size goal (no larger than Ghostscript /ebook) is the tight one.
const JPEG_FLAGS: i32 = jpeg::PROGRESSIVE;

/// A downsampled JPEG lands within this share below its target size on a DCT scale
/// (1/2, 1/4, 1/8) when it is taken to that scale instead ([`dct_size`]).
const DCT_SNAP: f32 = 0.95;

/// A JPEG's output size: the DCT scale just under the target `(tw, th)` when it is within
/// [`DCT_SNAP`] of it, else the target. At a DCT scale libjpeg-turbo decodes straight to
/// the output size, without the full-size decode and the area average after it
/// (wikipedia-printout-masks.pdf: a 2464 x 3456 scan used at 290 dpi, target 1274 x 1788
/// for 150 dpi; half is 1232 x 1728, 145 dpi; the file's balanced run 0.09 -> 0.04 s, its
/// re-encoding not smaller than the stored JPEG either way). No corpus output changed.
pub(super) fn dct_size(info: &ImageInfo, (tw, th): (u32, u32)) -> (u32, u32) {
    let (w, h) = (info.width, info.height);
    if (tw, th) == (w, h) {
        return (tw, th);
    }
    for d in [2u32, 4, 8] {
        let (sw, sh) = (w.div_ceil(d), h.div_ceil(d));
        if sw <= tw && sh <= th && sw as f32 >= DCT_SNAP * tw as f32 && sh as f32 >= DCT_SNAP * th as f32 {
            return (sw, sh);
        }
    }
    (tw, th)
}

pub(super) fn encode_jpeg(px: &[u8], w: u32, h: u32, comps: u32, quality: u32, s: &ImageSettings) -> Option<Vec<u8>> {
    jpeg::encode(px, w, h, comps, quality, s.target_dpi, JPEG_FLAGS).ok()
}

pub(super) fn dct(info: &ImageInfo, raw: &[u8], tw: u32, th: u32, s: &ImageSettings) -> Option<(Vec<u8>, Coding)> {
    let c = info.comps;
    let inflated;
    let data = if info.flate_wrapped {
        // JPEG data is at most about the size of its pixels; more is a bomb.
        let cap = info.width as u64 * info.height as u64 * c as u64 + (1 << 20);
        let mut v = Vec::new();
        flate2::read::ZlibDecoder::new(raw).take(cap).read_to_end(&mut v).ok()?;
        inflated = v;
        &inflated[..]
    } else {
        raw
    };
    // DCT scaling straight to the target when a factor lands on it exactly (300 -> 150
    // dpi); otherwise to at least twice the target, so that the area average that
    // finishes the job spans two or more pixels per output pixel (at a ratio just above
    // 1 it would only blur: strong's 300 -> 72 dpi via 1/4 lost 0.04 SSIM on the photos).
    let exact = [2u32, 4, 8].iter().any(|&d| info.width.div_ceil(d) == tw && info.height.div_ceil(d) == th);
    let (min_w, min_h) = if exact || (tw, th) == (info.width, info.height) {
        (tw, th)
    } else {
        ((2 * tw).min(info.width), (2 * th).min(info.height))
    };
    let (w, h, decoded) = jpeg::decode(data, info.width, info.height, c, info.color_transform, min_w, min_h)?;
    let scaled;
    let px: &[u8] = if (w, h) == (tw, th) {
        &decoded
    } else {
        scaled = downsample(&decoded, w, h, tw, th, c);
        drop(decoded);
        &scaled
    };
    // A JPEG kept at its size is decoded and encoded again: that second generation's
    // loss is on top of the first, so it gets the level's higher same-size quality.
    let q = if (tw, th) == (info.width, info.height) { s.jpeg_quality_same_size } else { s.jpeg_quality };
    Some((encode_jpeg(px, tw, th, c, q, s)?, Coding::Dct))
}
