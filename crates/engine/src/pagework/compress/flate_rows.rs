//! The rows of a flate image as the engine's image pass reads them: inflated as they are
//! needed, PNG predictors undone.

use std::io::Read;

use flate2::read::DeflateDecoder;

/// The rows of a flate image, PNG predictors undone. The zlib wrapper is read here and
/// its Adler-32 checksum not checked (as MuPDF does not fail on it; checking cost 20% of
/// the time on a 243 MB image): short or corrupt data still fails the row reads.
pub(super) struct FlateRows<'a> {
    z: Option<DeflateDecoder<&'a [u8]>>,
    predictor: bool,
    bpp: usize,
    /// Predictor byte + row, and the previous row (zeros above the first).
    buf: Vec<u8>,
    prev: Vec<u8>,
}

impl<'a> FlateRows<'a> {
    pub(super) fn new(raw: &'a [u8], row_len: usize, bpp: usize, predictor: bool) -> Self {
        // zlib header: deflate method, no preset dictionary, header check.
        let z = (raw.len() >= 2
            && raw[0] & 0x0f == 8
            && raw[1] & 0x20 == 0
            && (raw[0] as u16 * 256 + raw[1] as u16).is_multiple_of(31))
        .then(|| DeflateDecoder::new(&raw[2..]));
        FlateRows { z, predictor, bpp, buf: vec![0; row_len + predictor as usize], prev: vec![0; row_len] }
    }

    /// The next row, or `None` when the data ends early or is corrupt.
    pub(super) fn next_row(&mut self) -> Option<&[u8]> {
        self.z.as_mut()?.read_exact(&mut self.buf).ok()?;
        if !self.predictor {
            return Some(&self.buf);
        }
        let (kind, row) = self.buf.split_first_mut()?;
        let (bpp, prev) = (self.bpp, &self.prev);
        match *kind {
            0 => {}
            1 => {
                for i in bpp..row.len() {
                    row[i] = row[i].wrapping_add(row[i - bpp]);
                }
            }
            2 => row.iter_mut().zip(prev).for_each(|(r, &p)| *r = r.wrapping_add(p)),
            3 => {
                for i in 0..row.len() {
                    let left = if i >= bpp { row[i - bpp] as u16 } else { 0 };
                    row[i] = row[i].wrapping_add(((left + prev[i] as u16) / 2) as u8);
                }
            }
            4 => {
                for i in 0..row.len() {
                    let (a, b) = (if i >= bpp { row[i - bpp] } else { 0 }, prev[i]);
                    let c = if i >= bpp { prev[i - bpp] } else { 0 };
                    row[i] = row[i].wrapping_add(paeth(a, b, c));
                }
            }
            _ => return None,
        }
        self.prev.copy_from_slice(row);
        Some(&self.buf[1..])
    }
}

fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let p = a as i16 + b as i16 - c as i16;
    let (pa, pb, pc) = ((p - a as i16).abs(), (p - b as i16).abs(), (p - c as i16).abs());
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::write::ZlibEncoder;
    use flate2::Compression;

    use super::*;

    #[test]
    fn png_predictors_are_undone() {
        // Two grey rows of 3 pixels: Sub, then Paeth over the first.
        let plain = [10u8, 20, 30, 40, 50, 60];
        let coded = [1u8, 10, 10, 10, 4, 30, 10, 10];
        let mut e = ZlibEncoder::new(Vec::new(), Compression::default());
        e.write_all(&coded).unwrap();
        let z = e.finish().unwrap();
        let mut rows = FlateRows::new(&z, 3, 1, true);
        let mut got = Vec::new();
        got.extend_from_slice(rows.next_row().unwrap());
        got.extend_from_slice(rows.next_row().unwrap());
        assert_eq!(got, plain);
        assert!(rows.next_row().is_none());
    }
}
