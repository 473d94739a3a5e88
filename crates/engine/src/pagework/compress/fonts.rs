//! The embedded Type 1 fonts of a document turned into CFF subsets, and ToUnicode CMaps
//! cut to the codes shown: the functions the C side (`csrc/compress_fonts.c`) calls.
//!
//! C finds the fonts and the glyph names the pages and annotations show (MuPDF's
//! content processor and FreeType's names), this side parses the program
//! (`type1.rs`), converts the glyphs kept (`t1_outline.rs`, `t2_write.rs`) and writes
//! the CFF program (`cff_write.rs`). Any failure returns no program and the font stays
//! as it is; a panic is caught here and never crosses into C.

use std::ffi::{c_int, c_uchar};
use std::sync::Once;

use super::cff_write::write_cff;
use super::{tounicode, type1};

type Convert = unsafe extern "C" fn(
    data: *const c_uchar,
    len: usize,
    len1: usize,
    len2: usize,
    names: *const c_uchar,
    names_len: usize,
    keep_all: c_int,
    out: *mut *mut c_uchar,
    out_len: *mut usize,
) -> c_int;
type Free = unsafe extern "C" fn(data: *mut c_uchar, len: usize);
type Cut = unsafe extern "C" fn(
    data: *const c_uchar,
    len: usize,
    used: *const c_uchar,
    out: *mut *mut c_uchar,
    out_len: *mut usize,
) -> c_int;

extern "C" {
    fn engine_cz_set_type1_converter(convert: Convert, free: Free, cut: Cut);
}

/// Hands the converter to the C side (once per process, before the first compression).
pub(crate) fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| unsafe { engine_cz_set_type1_converter(convert, free, cut) });
}

/// The CFF program of the Type 1 program `data` with the glyphs `names` (all of them
/// when `names` is `None`); `None` when the program cannot be read or converted.
pub(crate) fn type1_to_cff(data: &[u8], len1: usize, len2: usize, names: Option<&[String]>) -> Option<Vec<u8>> {
    let font = type1::parse(data, len1, len2)?;
    write_cff(&font, names)
}

unsafe extern "C" fn convert(
    data: *const c_uchar,
    len: usize,
    len1: usize,
    len2: usize,
    names: *const c_uchar,
    names_len: usize,
    keep_all: c_int,
    out: *mut *mut c_uchar,
    out_len: *mut usize,
) -> c_int {
    if data.is_null() || out.is_null() || out_len.is_null() {
        return 0;
    }
    let data = unsafe { std::slice::from_raw_parts(data, len) };
    let names = if names.is_null() || names_len == 0 {
        &[][..]
    } else {
        unsafe { std::slice::from_raw_parts(names, names_len) }
    };
    let result = std::panic::catch_unwind(|| {
        let list: Vec<String> = names
            .split(|&b| b == 0)
            .filter(|n| !n.is_empty())
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .collect();
        type1_to_cff(data, len1, len2, (keep_all == 0).then_some(list.as_slice()))
    });
    hand_over(result, out, out_len)
}

/// Gives `result`'s bytes to C (freed with [`free`]); 1 when there are some.
fn hand_over(result: std::thread::Result<Option<Vec<u8>>>, out: *mut *mut c_uchar, out_len: *mut usize) -> c_int {
    match result {
        Ok(Some(bytes)) => {
            let boxed = bytes.into_boxed_slice();
            unsafe {
                *out_len = boxed.len();
                *out = Box::into_raw(boxed) as *mut c_uchar;
            }
            1
        }
        _ => 0,
    }
}

/// The ToUnicode CMap `data` cut to the codes set in `used` (256 flags).
unsafe extern "C" fn cut(
    data: *const c_uchar,
    len: usize,
    used: *const c_uchar,
    out: *mut *mut c_uchar,
    out_len: *mut usize,
) -> c_int {
    if data.is_null() || used.is_null() || out.is_null() || out_len.is_null() {
        return 0;
    }
    let data = unsafe { std::slice::from_raw_parts(data, len) };
    let used = unsafe { std::slice::from_raw_parts(used, 256) };
    let result = std::panic::catch_unwind(|| {
        let mut set = [false; 256];
        for (s, &u) in set.iter_mut().zip(used) {
            *s = u != 0;
        }
        tounicode::cut(data, &set)
    });
    hand_over(result, out, out_len)
}

unsafe extern "C" fn free(data: *mut c_uchar, len: usize) {
    if !data.is_null() {
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(data, len)) });
    }
}
