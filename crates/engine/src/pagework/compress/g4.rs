//! CCITT G4 encoding of bitonal images: MuPDF's encoder made faster (`csrc/g4.c`, the same
//! bytes), called with plain memory and no MuPDF context, so from any thread.

use std::ffi::{c_int, c_uchar};

extern "C" {
    fn engine_g4_encode(packed: *const c_uchar, w: c_int, h: c_int, len: *mut usize) -> *mut c_uchar;
    fn engine_g4_free(p: *mut c_uchar);
}

/// CCITT G4 of packed 1-bit rows (stride `(w + 7) / 8`; a 1 bit is G4 white), by MuPDF's
/// encoder made faster (csrc/g4.c; same bytes, no MuPDF context): callable from any thread.
pub(crate) fn g4_encode(packed: &[u8], w: u32, h: u32) -> Option<Vec<u8>> {
    assert!(packed.len() >= (w as usize).div_ceil(8) * h as usize);
    let mut len = 0usize;
    let p = unsafe { engine_g4_encode(packed.as_ptr(), w as c_int, h as c_int, &mut len) };
    if p.is_null() {
        return None;
    }
    let v = unsafe { std::slice::from_raw_parts(p, len) }.to_vec();
    unsafe { engine_g4_free(p) };
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    extern "C" {
        fn engine_g4_encode_mupdf(packed: *const c_uchar, w: c_int, h: c_int, len: *mut usize) -> *mut c_uchar;
    }

    fn mupdf_g4(packed: &[u8], w: u32, h: u32) -> Vec<u8> {
        let mut len = 0usize;
        crate::pdf::private_context::share_locks();
        let p = unsafe { engine_g4_encode_mupdf(packed.as_ptr(), w as c_int, h as c_int, &mut len) };
        assert!(!p.is_null());
        let v = unsafe { std::slice::from_raw_parts(p, len) }.to_vec();
        unsafe { engine_g4_free(p) };
        v
    }

    #[test]
    fn the_fast_g4_encoder_writes_mupdfs_bytes() {
        // Widths around byte boundaries; rows of noise, of text-like strokes, blank, full.
        let mut seed = 0x2545_f491u32;
        let mut rand = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        for (w, h) in [(1u32, 1u32), (7, 3), (8, 5), (9, 4), (64, 64), (2481, 40), (1000, 1)] {
            let stride = (w as usize).div_ceil(8);
            for kind in 0..5 {
                let packed: Vec<u8> = (0..stride * h as usize)
                    .map(|i| match kind {
                        0 => rand() as u8,
                        1 => 0x00,
                        2 => 0xff,
                        // Long runs with edges at odd places.
                        3 => {
                            if (i % stride) * 8 % 97 < 40 {
                                0xff
                            } else {
                                0x00
                            }
                        }
                        _ => {
                            if rand() % 7 == 0 {
                                (rand() as u8) | 0x81
                            } else {
                                0xff
                            }
                        }
                    })
                    .collect();
                assert_eq!(g4_encode(&packed, w, h).unwrap(), mupdf_g4(&packed, w, h), "{w}x{h} kind {kind}");
            }
        }
    }
}
