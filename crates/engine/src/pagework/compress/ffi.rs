//! The C side of compress (`csrc/compress*.c`, declared in `csrc/compressor.h`): a document
//! opened in a private MuPDF context, its image list, stream replacement, MuPDF's image
//! rewriter and the save. A [`Doc`] is used from one thread only (MuPDF contexts are
//! not thread-safe); the bytes it hands out are plain copies.

use std::ffi::{c_char, c_float, c_int, c_uchar, c_void, CStr, CString};
use std::path::Path;

use crate::error::{EngineError, ErrorCode, Result};
use crate::pdf::open::path_str;

/// Return codes of the C side (csrc/compressor.h).
pub(crate) const OK: c_int = 0;
pub(crate) const OPEN_FAILED: c_int = 1;
pub(crate) const NEEDS_PASSWORD: c_int = 2;

/// Options of `engine_cz_finish` (layout of `engine_compress_options`).
#[repr(C)]
#[derive(Default, Clone, Copy)]
pub(crate) struct RawOptions {
    pub rewrite_images: c_int,
    pub threshold_dpi: c_int,
    pub target_dpi: c_int,
    pub jpeg_quality: c_int,
    pub lossless_stays_lossless: c_int,
    pub recompress_flate: c_int,
    pub garbage: c_int,
    pub object_streams: c_int,
    pub skip_rewriter: c_int,
    pub rewrite_in_place: c_int,
    pub subset_fonts: c_int,
    pub drop_private: c_int,
    pub page_count: c_int,
    pub rewriter_ran: c_int,
    pub fonts_subset: c_int,
    /// The deflater of image streams re-deflated by the save ([`deflate_pixels`]; MuPDF's
    /// zlib when `None`).
    pub deflate_pixels: Option<unsafe extern "C" fn(*const c_uchar, usize, *mut c_uchar, usize) -> usize>,
}

/// `len` bytes at `input` deflated by zlib-rs at level 9 (zlib format) into `out` (`cap`
/// bytes); the bytes written, or 0 when they did not fit or the deflater failed (the C
/// side then falls back to zlib). Called from csrc/compress_deflate.c's deflate threads: on
/// pixels zlib-rs 9 is smaller than zlib 9 and faster (measured in csrc/compress_deflate.c).
/// Level 9 but for its "nice" match length, 128 instead of 258 ([`PIXEL_NICE_MATCH`]).
pub(crate) unsafe extern "C" fn deflate_pixels(
    input: *const c_uchar,
    len: usize,
    out: *mut c_uchar,
    cap: usize,
) -> usize {
    use libz_rs_sys as z;
    if input.is_null() || out.is_null() || len > u32::MAX as usize {
        return 0;
    }
    std::panic::catch_unwind(|| {
        // SAFETY: a zeroed z_stream is the documented initial state (no allocator set:
        // zlib-rs's own); init, tune, deflate and end are zlib's API on that stream, and
        // the C caller passes its buffer's data and length and `cap` writable bytes.
        unsafe {
            let mut s: z::z_stream = std::mem::zeroed();
            let size = std::mem::size_of::<z::z_stream>() as c_int;
            if z::deflateInit2_(&mut s, 9, z::Z_DEFLATED, 15, 8, z::Z_DEFAULT_STRATEGY, z::zlibVersion(), size)
                != z::Z_OK
            {
                return 0;
            }
            z::deflateTune(&mut s, 32, 258, PIXEL_NICE_MATCH, 4096);
            s.next_in = input as *mut c_uchar;
            s.avail_in = len as u32;
            s.next_out = out;
            s.avail_out = cap.min(u32::MAX as usize) as u32;
            let done = z::deflate(&mut s, z::Z_FINISH) == z::Z_STREAM_END;
            let written = if done { s.total_out as usize } else { 0 };
            z::deflateEnd(&mut s);
            written
        }
    })
    .unwrap_or(0)
}

/// The match length at which [`deflate_pixels`] stops looking for a longer match (zlib's
/// `nice_length`; 258 at level 9). Measured on chart-slanted-text.pdf's
/// 1.15 MB chart, plain / with its PNG predictor: 258: 36,163 / 36,490 bytes in 26 / 27
/// ms; 192: 36,049 / 36,374 in 21 / 23; 128: 36,109 / 36,451 in 17 / 18; 96: 36,194 /
/// 36,551 in 15 / 16 (a shorter chain instead: 2048 +0.3%, 1024 +2%). Pixel rows repeat
/// the row above for long runs, where level 9 walks its whole chain for a longer match
/// that hardly pays.
const PIXEL_NICE_MATCH: c_int = 128;

/// How an image is stored: its only filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Coding {
    Dct,
    Flate,
    /// 1 bit, one component: handed out decoded (packed rows).
    Bitonal,
}

const IMG_DCT: c_int = 1;
const IMG_FLATE: c_int = 2;
const IMG_BITONAL: c_int = 3;
/// Too large to decode: kept as stored (the C side hides it from the rewriter).
const IMG_KEEP: c_int = 4;

#[repr(C)]
struct RawImage {
    num: c_int,
    kind: c_int,
    width: c_int,
    height: c_int,
    comps: c_int,
    png_predictor: c_int,
    flate_wrapped: c_int,
    color_transform: c_int,
    dpi: c_float,
    length: c_int,
    jbig2: c_int,
}

/// An image XObject the engine's pass may re-encode (see `eligible` in
/// csrc/compress_images.c).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ImageInfo {
    pub index: usize,
    pub coding: Coding,
    pub width: u32,
    pub height: u32,
    /// 1 grey, 3 colour; 8 bits per sample.
    pub comps: u32,
    /// Flate rows carry a PNG predictor byte.
    pub png_predictor: bool,
    /// DCT: the JPEG data is deflated once more (`[/FlateDecode /DCTDecode]`).
    pub flate_wrapped: bool,
    /// DCT: /ColorTransform, -1 when absent.
    pub color_transform: i32,
    /// Effective dpi of its largest use.
    pub dpi: f32,
    /// Bytes of the stream as stored.
    pub stored_len: usize,
    /// Bitonal, stored as JBIG2.
    pub jbig2: bool,
}

extern "C" {
    fn engine_cz_open(
        input: *const c_char,
        out: *mut *mut c_void,
        pages: *mut c_int,
        err: *mut c_char,
        errlen: c_int,
    ) -> c_int;
    fn engine_cz_close(z: *mut c_void);
    fn engine_cz_gather(z: *mut c_void) -> c_int;
    fn engine_cz_image(z: *mut c_void, i: c_int) -> *const RawImage;
    fn engine_cz_raw(
        z: *mut c_void,
        i: c_int,
        data: *mut *const c_uchar,
        len: *mut usize,
        err: *mut c_char,
        errlen: c_int,
    ) -> c_int;
    fn engine_cz_release_raw(z: *mut c_void, i: c_int);
    fn engine_cz_mark_handled(z: *mut c_void, i: c_int);
    fn engine_cz_replace(
        z: *mut c_void,
        i: c_int,
        data: *const c_uchar,
        len: usize,
        w: c_int,
        h: c_int,
        kind: c_int,
        err: *mut c_char,
        errlen: c_int,
    ) -> c_int;
    fn engine_cz_replace_bitonal(
        z: *mut c_void,
        i: c_int,
        data: *const c_uchar,
        len: usize,
        w: c_int,
        h: c_int,
        mode: c_int,
        replaced: *mut c_int,
        err: *mut c_char,
        errlen: c_int,
    ) -> c_int;
    fn engine_g4_encode(packed: *const c_uchar, w: c_int, h: c_int, len: *mut usize) -> *mut c_uchar;
    fn engine_g4_free(p: *mut c_uchar);
    fn engine_cz_finish(
        z: *mut c_void,
        output: *const c_char,
        o: *mut RawOptions,
        err: *mut c_char,
        errlen: c_int,
    ) -> c_int;
}

/// How a bitonal image's new stream is encoded (`ENGINE_BITONAL_*` in csrc/compressor.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BitonalEncoding {
    Flate,
    /// CCITT G4, 1 bits white.
    G4,
    /// CCITT G4 of the inverted rows (`/BlackIs1 true`).
    G4BlackIs1,
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

fn c_path(p: &Path) -> Result<CString> {
    CString::new(path_str(p)?).map_err(|_| EngineError::invalid_options("path has a NUL byte"))
}

struct ErrBuf([c_char; 512]);

impl ErrBuf {
    fn new() -> Self {
        ErrBuf([0; 512])
    }
    fn ptr(&mut self) -> *mut c_char {
        self.0.as_mut_ptr()
    }
    fn message(&self) -> String {
        unsafe { CStr::from_ptr(self.0.as_ptr()) }.to_string_lossy().into_owned()
    }
}

/// A document opened by the C side.
pub(crate) struct Doc {
    z: *mut c_void,
}

impl Drop for Doc {
    fn drop(&mut self) {
        unsafe { engine_cz_close(self.z) };
    }
}

impl Doc {
    /// Opens `path`; a file MuPDF cannot open is `invalid_pdf`, one that needs a
    /// password `encrypted_input`.
    pub fn open(path: &Path) -> Result<Doc> {
        let c = c_path(path)?;
        let mut z = std::ptr::null_mut();
        let mut pages: c_int = 0;
        let mut err = ErrBuf::new();
        crate::pdf::private_context::share_locks();
        let rc = unsafe { engine_cz_open(c.as_ptr(), &mut z, &mut pages, err.ptr(), 512) };
        match rc {
            OK => Ok(Doc { z }),
            OPEN_FAILED => {
                Err(EngineError::new(ErrorCode::InvalidPdf, format!("cannot open the PDF: {}", err.message())))
            }
            NEEDS_PASSWORD => Err(EngineError::encrypted_input()),
            _ => Err(EngineError::new(ErrorCode::EngineError, "compressing: no MuPDF context")),
        }
    }

    /// The images the engine's pass may take, with their effective dpi (empty when a
    /// page could not be read through).
    pub fn gather(&mut self) -> Vec<ImageInfo> {
        let n = unsafe { engine_cz_gather(self.z) };
        (0..n.max(0))
            .filter_map(|i| {
                let r = unsafe { engine_cz_image(self.z, i).as_ref() }?;
                let coding = match r.kind {
                    IMG_DCT => Coding::Dct,
                    IMG_FLATE => Coding::Flate,
                    IMG_BITONAL => Coding::Bitonal,
                    // Kept as stored, already marked handled by the C side.
                    IMG_KEEP => return None,
                    _ => return None,
                };
                Some(ImageInfo {
                    index: i as usize,
                    coding,
                    width: r.width.max(0) as u32,
                    height: r.height.max(0) as u32,
                    comps: r.comps as u32,
                    png_predictor: r.png_predictor != 0,
                    flate_wrapped: r.flate_wrapped != 0,
                    color_transform: r.color_transform,
                    dpi: r.dpi,
                    stored_len: r.length.max(0) as usize,
                    jbig2: r.jbig2 != 0,
                })
            })
            .collect()
    }

    /// A copy of image `index`'s stored bytes (filters not undone; a bitonal image's
    /// decoded packed rows, at most its size).
    pub fn raw(&mut self, index: usize) -> Result<Vec<u8>> {
        let mut data: *const c_uchar = std::ptr::null();
        let mut len = 0usize;
        let mut err = ErrBuf::new();
        let rc = unsafe { engine_cz_raw(self.z, index as c_int, &mut data, &mut len, err.ptr(), 512) };
        if rc != OK {
            return Err(EngineError::new(ErrorCode::EngineError, format!("reading an image: {}", err.message())));
        }
        let v = if len == 0 { Vec::new() } else { unsafe { std::slice::from_raw_parts(data, len) }.to_vec() };
        unsafe { engine_cz_release_raw(self.z, index as c_int) };
        Ok(v)
    }

    /// Leaves image `index` as it is and out of MuPDF's rewriter.
    pub fn mark_handled(&mut self, index: usize) {
        unsafe { engine_cz_mark_handled(self.z, index as c_int) };
    }

    /// Replaces image `index` with `data` (w x h pixels, same colour space).
    pub fn replace(&mut self, index: usize, data: &[u8], w: u32, h: u32, coding: Coding) -> Result<()> {
        let mut err = ErrBuf::new();
        let kind = if coding == Coding::Dct { IMG_DCT } else { IMG_FLATE };
        let rc = unsafe {
            engine_cz_replace(
                self.z,
                index as c_int,
                data.as_ptr(),
                data.len(),
                w as c_int,
                h as c_int,
                kind,
                err.ptr(),
                512,
            )
        };
        if rc != OK {
            return Err(EngineError::new(ErrorCode::EngineError, format!("replacing an image: {}", err.message())));
        }
        Ok(())
    }

    /// Replaces image `index` with the 1-bit `w` x `h` image `data`, encoded as `encoding`,
    /// when smaller than the stored stream; true when replaced (else it is kept as stored,
    /// out of MuPDF's rewriter).
    pub fn replace_bitonal(
        &mut self,
        index: usize,
        data: &[u8],
        w: u32,
        h: u32,
        encoding: BitonalEncoding,
    ) -> Result<bool> {
        let mut err = ErrBuf::new();
        let mut replaced: c_int = 0;
        let mode = match encoding {
            BitonalEncoding::Flate => 0,
            BitonalEncoding::G4 => 1,
            BitonalEncoding::G4BlackIs1 => 2,
        };
        let rc = unsafe {
            engine_cz_replace_bitonal(
                self.z,
                index as c_int,
                data.as_ptr(),
                data.len(),
                w as c_int,
                h as c_int,
                mode,
                &mut replaced,
                err.ptr(),
                512,
            )
        };
        if rc != OK {
            return Err(EngineError::new(ErrorCode::EngineError, format!("replacing an image: {}", err.message())));
        }
        Ok(replaced != 0)
    }

    /// MuPDF's image rewriter (for what the pass left), clean-up and save to `output`.
    /// Returns the C code (`OK` or `FAILED`) and its message.
    pub fn finish(&mut self, output: &Path, options: &mut RawOptions) -> Result<(c_int, String)> {
        let c = c_path(output)?;
        let mut err = ErrBuf::new();
        let rc = unsafe { engine_cz_finish(self.z, c.as_ptr(), options, err.ptr(), 512) };
        Ok((rc, err.message()))
    }
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

    #[test]
    fn the_pixel_deflater_writes_zlib_data_that_inflates_back_and_refuses_a_short_buffer() {
        use std::io::Read;
        // A chart-like image: flat runs with a few edges per row.
        let pixels: Vec<u8> =
            (0..300 * 200 * 3).map(|i| if (i / 3) % 300 < 40 + (i / 900) % 7 { 20 } else { 240 }).collect();
        let mut out = vec![0u8; pixels.len() + 64];
        let n = unsafe { deflate_pixels(pixels.as_ptr(), pixels.len(), out.as_mut_ptr(), out.len()) };
        assert!(n > 0 && n < pixels.len() / 10, "{n} bytes");
        let mut back = Vec::new();
        flate2::read::ZlibDecoder::new(&out[..n]).read_to_end(&mut back).unwrap();
        assert_eq!(back, pixels);
        // Too small for the result: 0 (the C side then deflates with zlib).
        assert_eq!(unsafe { deflate_pixels(pixels.as_ptr(), pixels.len(), out.as_mut_ptr(), n - 1) }, 0);
    }
}
