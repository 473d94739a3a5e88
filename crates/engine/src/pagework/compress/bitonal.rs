//! Bitonal (1-bit) images in the engine's image pass: 1-bit images (any filter, handed
//! over decoded) and 8-bit grey images whose samples are all black or white.
//!
//! Like Ghostscript's /ebook for monochrome: used above [`ImageSettings::bitonal_threshold_dpi`]
//! (450 dpi at balanced) an image is downsampled to the target (300 dpi) by area
//! majority (the area average of the 0/255 samples, then a threshold at half), so thin
//! strokes keep their mass instead of vanishing as under subsampling. The result stays
//! 1-bit; it is stored as the smaller of CCITT G4 (either polarity, encoded by MuPDF on
//! the calling thread: `engine_cz_replace_bitonal`) and flate (here), and replaces the
//! original only when smaller. An 8-bit black-and-white image always becomes 1-bit
//! (eight times fewer samples). Sample values are kept (0 stays 0), so the colour
//! space, /Decode and /ImageMask stay valid.

use std::io::Write;

use flate2::write::ZlibEncoder;
use flate2::Compression;

use super::resample::Downsampler;
use super::ImageSettings;

/// A bitonal image ready for the C side: packed rows (stride `(w + 7) / 8`) and their
/// zlib data.
pub(crate) struct Bitonal {
    pub packed: Vec<u8>,
    pub w: u32,
    pub h: u32,
    pub flate: Vec<u8>,
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

/// `packed` (w x h, stride `(w + 7) / 8`) downsampled to `tw` x `th` by area majority
/// (unchanged when the size is), with its zlib data. `None` when the data is short.
pub(crate) fn encode(packed: Vec<u8>, w: u32, h: u32, tw: u32, th: u32) -> Option<Bitonal> {
    let stride = (w as usize).div_ceil(8);
    if packed.len() < stride * h as usize {
        return None;
    }
    let packed = if (tw, th) == (w, h) {
        packed
    } else {
        let mut out = Vec::with_capacity((tw as usize).div_ceil(8) * th as usize);
        let mut d = Downsampler::new(w, h, tw, th, 1);
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
    let used = (tw as usize).div_ceil(8) * th as usize;
    let mut z = ZlibEncoder::new(Vec::new(), Compression::best());
    z.write_all(&packed[..used]).ok()?;
    Some(Bitonal { flate: z.finish().ok()?, packed, w: tw, h: th })
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
    fn majority_downsampling_keeps_a_solid_stroke_and_drops_specks() {
        // 16 x 16 white with an 8-px-wide black column at x 0..8 and a single black
        // speck at (12, 12): halved to 8 x 8, the column is 4 px wide, the speck gone.
        let (w, h) = (16u32, 16u32);
        let mut packed = Vec::new();
        for y in 0..h {
            let row: Vec<u8> = (0..w).map(|x| if x < 8 || (x == 12 && y == 12) { 0 } else { 255 }).collect();
            pack_row(&row, &mut packed);
        }
        let b = encode(packed, w, h, 8, 8).unwrap();
        assert_eq!((b.w, b.h), (8, 8));
        assert!(b.packed.iter().all(|&r| r == 0b0000_1111));
    }
}
