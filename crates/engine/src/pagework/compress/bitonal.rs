//! Bitonal (1-bit) images in the engine's image pass: 1-bit images (any filter, handed
//! over decoded) and 8-bit grey images whose samples are all black or white.
//!
//! Like Ghostscript's /ebook for monochrome: used above [`ImageSettings::bitonal_threshold_dpi`]
//! (450 dpi at balanced) an image is downsampled to the target (300 dpi) by area
//! majority (the area average of the 0/255 samples, then a threshold at half), so thin
//! strokes keep their mass instead of vanishing as under subsampling. The result stays
//! 1-bit; it is stored as the smaller of CCITT G4 and flate, and replaces the original
//! only when smaller. G4 is MuPDF's encoder made faster (csrc/g4.c, no MuPDF context), so
//! that it runs on the worker threads; its polarity puts the majority colour in G4's white (whose run
//! codes are the short ones: scanned-ccitt-g4.pdf, stored the other way round, is 3%
//! smaller re-encoded). An 8-bit black-and-white image becomes 1-bit (eight times
//! fewer samples) unless it is downsampled at balanced (then it is averaged to grey:
//! src/pagework/compress/images.rs). Sample values are kept (0 stays 0), so the colour
//! space, /Decode and /ImageMask stay valid.

use std::io::Write;

use flate2::write::ZlibEncoder;
use flate2::Compression;

use super::ffi::BitonalEncoding;
use super::g4::g4_encode;
use super::resample::Downsampler;
use super::{ImageSettings, BALANCED};

/// A bitonal image's new stream.
pub(crate) struct Bitonal {
    pub data: Vec<u8>,
    pub encoding: BitonalEncoding,
    pub w: u32,
    pub h: u32,
}

/// Output size of a bitonal image used at `dpi`: the target dpi's above the
/// threshold, else unchanged.
pub(crate) fn target_size(w: u32, h: u32, dpi: f32, s: &ImageSettings) -> (u32, u32) {
    if !(dpi > s.bitonal_threshold_dpi as f32) {
        return (w, h);
    }
    let f = s.bitonal_target_dpi as f32 / dpi;
    (((w as f32 * f + 0.5) as u32).clamp(1, w), ((h as f32 * f + 0.5) as u32).clamp(1, h))
}

/// Packs one row of 8-bit samples (each 0 or 255) into bits, most significant first
/// (0 -> 0, 255 -> 1), appending to `out`.
pub(crate) fn pack_row(row: &[u8], out: &mut Vec<u8>) {
    for chunk in row.chunks(8) {
        let mut b = 0u8;
        for (i, &v) in chunk.iter().enumerate() {
            b |= ((v >= 128) as u8) << (7 - i);
        }
        out.push(b);
    }
}

fn unpack_row(packed: &[u8], w: usize, out: &mut [u8]) {
    for (x, o) in out.iter_mut().enumerate().take(w) {
        *o = if packed[x >> 3] & (0x80 >> (x & 7)) != 0 { 255 } else { 0 };
    }
}

/// Largest image (pixels) also tried at the sizes of the milder levels.
const SMALL_IMAGE: u64 = 1 << 20;

/// Sizes a bitonal image used at `dpi` may be stored at under `s`, the level's own target
/// first. A small image is also tried at the sizes a milder level would store it at
/// (balanced's target, its own size): fewer pixels need not mean fewer bytes in G4 (a mark
/// took 9 bytes more at 3 x 3 than at 4 x 4), and a stronger level must not come out
/// larger than a milder one.
pub(crate) fn candidate_sizes(w: u32, h: u32, dpi: f32, s: &ImageSettings) -> Vec<(u32, u32)> {
    let mut sizes = vec![target_size(w, h, dpi, s)];
    if w as u64 * h as u64 <= SMALL_IMAGE {
        for size in [target_size(w, h, dpi, &BALANCED), (w, h)] {
            if !sizes.contains(&size) {
                sizes.push(size);
            }
        }
    }
    sizes
}

/// `packed` (w x h, stride `(w + 7) / 8`) downsampled by area majority to each of `sizes`
/// (unchanged at its own size) and encoded; the smallest, the first on a tie. `None` when
/// the data is short.
pub(crate) fn encode(packed: Vec<u8>, w: u32, h: u32, sizes: &[(u32, u32)]) -> Option<Bitonal> {
    if packed.len() < (w as usize).div_ceil(8) * h as usize {
        return None;
    }
    if let [(tw, th)] = *sizes {
        return encode_rows(downsample(packed, w, h, tw, th)?, tw, th);
    }
    sizes
        .iter()
        .filter_map(|&(tw, th)| encode_rows(downsample(packed.clone(), w, h, tw, th)?, tw, th))
        .min_by_key(|b| b.data.len())
}

/// `packed` (w x h) encoded as the smaller of CCITT G4 and flate.
fn encode_rows(packed: Vec<u8>, w: u32, h: u32) -> Option<Bitonal> {
    let stride = (w as usize).div_ceil(8);
    let rows = &packed[..stride * h as usize];
    // Majority colour -> G4 white (1 bits are white to MuPDF's encoder). Padding bits
    // at row ends count too; they are few.
    let ones: u64 = rows.iter().map(|b| b.count_ones() as u64).sum();
    // G4 and a fast deflate on two threads: a page-sized scan alone in its file is the
    // whole run (scanned-ccitt-g4.pdf), and the image pass's other worker is idle then.
    let (g4, fast) = std::thread::scope(|scope| {
        let g4 = scope.spawn(|| {
            if 2 * ones >= 8 * rows.len() as u64 {
                (g4_encode(rows, w, h), BitonalEncoding::G4)
            } else {
                let inverted: Vec<u8> = rows.iter().map(|b| !b).collect();
                (g4_encode(&inverted, w, h), BitonalEncoding::G4BlackIs1)
            }
        });
        // Flate wins on halftones and dithering; zlib level 1 first (fast), level 9 only
        // when that comes near G4.
        let fast = deflate(rows, Compression::fast());
        (g4.join(), fast)
    });
    let (g4, encoding) = g4.ok()?;
    let fast = fast?;
    let g4_len = g4.as_ref().map_or(usize::MAX, Vec::len);
    let flate = if fast.len() < g4_len.saturating_add(g4_len / 4) {
        let best = deflate(rows, Compression::best())?;
        if best.len() < fast.len() {
            best
        } else {
            fast
        }
    } else {
        fast
    };
    Some(match g4 {
        Some(g4) if g4.len() <= flate.len() => Bitonal { data: g4, encoding, w, h },
        _ => Bitonal { data: flate, encoding: BitonalEncoding::Flate, w, h },
    })
}

/// `data` in zlib format at `level`.
pub(super) fn deflate(data: &[u8], level: Compression) -> Option<Vec<u8>> {
    let mut z = ZlibEncoder::new(Vec::new(), level);
    z.write_all(data).ok()?;
    z.finish().ok()
}

/// `packed` downsampled to `tw` x `th` by area majority (as it is when the size is).
fn downsample(packed: Vec<u8>, w: u32, h: u32, tw: u32, th: u32) -> Option<Vec<u8>> {
    let stride = (w as usize).div_ceil(8);
    if packed.len() < stride * h as usize {
        return None;
    }
    let packed = if (tw, th) == (w, h) {
        packed
    } else {
        let mut out = Vec::with_capacity((tw as usize).div_ceil(8) * th as usize);
        // Rounded: a 2 x 2 block half black stays white, as before the truncation at
        // power-of-two factors (resample.rs).
        let mut d = Downsampler::new(w, h, tw, th, 1).rounding();
        let mut row = vec![0u8; w as usize];
        for src in packed.chunks_exact(stride).take(h as usize) {
            unpack_row(src, w as usize, &mut row);
            d.push::<()>(&row, &mut |r| {
                pack_row(r, &mut out);
                Ok(())
            })
            .ok()?;
        }
        out
    };
    Some(packed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_keeps_sample_values() {
        let mut out = Vec::new();
        pack_row(&[255, 0, 0, 255, 255, 255, 0, 0, 255], &mut out);
        assert_eq!(out, vec![0b1001_1100, 0b1000_0000]);
    }

    #[test]
    fn a_small_image_is_never_stored_larger_at_strong_than_at_balanced_or_at_its_own_size() {
        // A brick hatch: mortar rows every `course` rows, joints every 8 columns offset by
        // half a brick on alternate courses; 1 is ink.
        fn brick(size: u32, course: u32) -> Vec<u8> {
            let mut packed = Vec::new();
            for y in 0..size {
                let row: Vec<u8> = (0..size)
                    .map(|x| {
                        let joint = (x + (y / course % 2) * 4) % 8 == 6;
                        if y % course == course - 1 || joint {
                            0
                        } else {
                            255
                        }
                    })
                    .collect();
                pack_row(&row, &mut packed);
            }
            packed
        }
        use crate::pagework::compress::{BALANCED, STRONG};
        // Small marks (seeded pseudo-random bits, a few solid), 2 x 2 to 40 x 40, used at
        // dpis that downsample at both levels, at strong only, or at neither.
        let mut seed = 7u32;
        let mut next = || {
            seed = seed.wrapping_mul(1103515245).wrapping_add(12345);
            (seed >> 16) as u8
        };
        for size in 2..=40u32 {
            for dpi in [250.0f32, 320.0, 400.0, 500.0, 700.0, 900.0, 1200.0, 2000.0, 3000.0] {
                for k in 0..4 {
                    let stride = (size as usize).div_ceil(8);
                    // Solid, a brick hatch (as pattern cells of geological maps), or noise.
                    let packed: Vec<u8> = match k {
                        0 => vec![0xff; stride * size as usize],
                        1 | 2 => brick(size, k as u32 + 4),
                        _ => (0..stride * size as usize).map(|_| next()).collect(),
                    };
                    let at = |s| encode(packed.clone(), size, size, &candidate_sizes(size, size, dpi, s)).unwrap();
                    let own = encode(packed.clone(), size, size, &[(size, size)]).unwrap();
                    let (balanced, strong) = (at(&BALANCED), at(&STRONG));
                    assert!(
                        balanced.data.len() <= own.data.len(),
                        "{size} px at {dpi} dpi: balanced larger than as it is"
                    );
                    assert!(
                        strong.data.len() <= balanced.data.len(),
                        "{size} px at {dpi} dpi: strong larger than balanced"
                    );
                }
            }
        }
    }

    #[test]
    fn majority_downsampling_keeps_a_solid_stroke_and_drops_specks() {
        // 16 x 16 white with an 8-px-wide black column at x 0..8 and a single black
        // speck at (12, 12): halved to 8 x 8, the column is 4 px wide, the speck gone.
        let (w, h) = (16u32, 16u32);
        let mut packed = Vec::new();
        for y in 0..h {
            let row: Vec<u8> = (0..w).map(|x| if x < 8 || (x == 12 && y == 12) { 0 } else { 255 }).collect();
            pack_row(&row, &mut packed);
        }
        let small = downsample(packed, w, h, 8, 8).unwrap();
        assert!(small.iter().all(|&r| r == 0b0000_1111));
    }
}
