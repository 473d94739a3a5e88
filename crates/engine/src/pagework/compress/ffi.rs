//! The C side of compress (`csrc/compress*.c`, declared in `csrc/compressor.h`), the one
//! boundary between the compressor's Rust and C: Rust calls C, C never calls back. A [`Doc`]
//! is one document opened in a private MuPDF context; [`super::run_passes`] calls its passes
//! in order, each returning a result of its own (or the C side's message). Bytes cross as
//! plain copies or as borrowed views that live no longer than the C side keeps them. A
//! [`Doc`] is used from one thread only (MuPDF contexts are not thread-safe).

use std::ffi::{c_char, c_float, c_int, c_uchar, c_void, CStr, CString};
use std::path::Path;

use crate::error::{EngineError, ErrorCode, Result};
use crate::pdf::open::path_str;

// csrc/compress_deflate.c calls zlib-rs through the C API libz-rs-sys exports.
use libz_rs_sys as _;

/// Return codes of the C side (csrc/compressor.h).
pub(crate) const OK: c_int = 0;
pub(crate) const OPEN_FAILED: c_int = 1;
pub(crate) const NEEDS_PASSWORD: c_int = 2;

/// How MuPDF's rewriter treats the images the engine's pass left (`engine_image_options`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct ImageOptions {
    pub threshold_dpi: c_int,
    pub target_dpi: c_int,
    pub jpeg_quality: c_int,
    pub lossless_stays_lossless: c_int,
    /// 0: the images the pass did not take are kept as they are.
    pub rewriter: c_int,
    /// The rewriter on the document itself (comparisons only).
    pub in_place: c_int,
}

/// What the pass over the other images did (`engine_images_result`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct ImagesResult {
    /// MuPDF's rewriter ran (or failed): the content guard checks.
    pub rewriter_ran: c_int,
}

/// What the first half of the fonts pass found (`engine_fonts_found`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct FontsFound {
    subset: c_int,
    type1: c_int,
    cmaps: c_int,
}

/// What the second half of the fonts pass changed (`engine_fonts_installed`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct FontsInstalled {
    pub type1_converted: c_int,
    pub cff_subset: c_int,
    pub cmaps_cut: c_int,
    pub type3_trimmed: c_int,
}

#[repr(C)]
struct RawType1 {
    num: c_int,
    data: *const c_uchar,
    len: usize,
    length1: c_int,
    length2: c_int,
    names: *const c_uchar,
    names_len: usize,
    keep_all: c_int,
}

#[repr(C)]
struct RawCmap {
    num: c_int,
    data: *const c_uchar,
    len: usize,
    used: *const c_uchar,
}

#[repr(C)]
struct RawBytes {
    data: *const c_uchar,
    len: usize,
}

/// A Type 1 program the C side copied out, borrowed until [`Doc::fonts_install`].
pub(crate) struct Type1Copy<'a> {
    pub data: &'a [u8],
    /// /Length1 and /Length2 of the stream (as C's size_t conversion of the integers).
    pub length1: usize,
    pub length2: usize,
    /// The names of the glyphs shown, each ended by a NUL.
    pub names: &'a [u8],
    /// A font of it that no content selects: every glyph kept.
    pub keep_all: bool,
}

/// A ToUnicode CMap the C side copied out, borrowed until [`Doc::fonts_install`].
pub(crate) struct CmapCopy<'a> {
    pub data: &'a [u8],
    /// 256 flags: the one-byte codes shown.
    pub used: &'a [u8],
}

/// `len` bytes at `p` (empty for a null pointer).
///
/// # Safety
/// `p` points at `len` readable bytes that outlive `'a`.
unsafe fn bytes<'a>(p: *const c_uchar, len: usize) -> &'a [u8] {
    if p.is_null() || len == 0 {
        &[]
    } else {
        unsafe { std::slice::from_raw_parts(p, len) }
    }
}

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
    fn engine_cz_reduce_functions(z: *mut c_void, err: *mut c_char, errlen: c_int) -> c_int;
    fn engine_cz_other_images(
        z: *mut c_void,
        o: *const ImageOptions,
        r: *mut ImagesResult,
        err: *mut c_char,
        errlen: c_int,
    ) -> c_int;
    fn engine_cz_prune(z: *mut c_void, drop_private: c_int, err: *mut c_char, errlen: c_int) -> c_int;
    fn engine_cz_fonts_collect(z: *mut c_void, r: *mut FontsFound, err: *mut c_char, errlen: c_int) -> c_int;
    fn engine_cz_type1_program(z: *mut c_void, i: c_int) -> *const RawType1;
    fn engine_cz_cmap_program(z: *mut c_void, i: c_int) -> *const RawCmap;
    fn engine_cz_fonts_install(
        z: *mut c_void,
        type1: *const RawBytes,
        ntype1: c_int,
        cmaps: *const RawBytes,
        ncmaps: c_int,
        r: *mut FontsInstalled,
        err: *mut c_char,
        errlen: c_int,
    ) -> c_int;
    fn engine_cz_streams(z: *mut c_void, pdfa_too: c_int, err: *mut c_char, errlen: c_int) -> c_int;
    fn engine_cz_save(z: *mut c_void, output: *const c_char, err: *mut c_char, errlen: c_int) -> c_int;
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

/// `p` for the C side.
pub(crate) fn c_path(p: &Path) -> Result<CString> {
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
    pages: usize,
    /// What the fonts pass's first half found (how many copies there are to read).
    fonts: FontsFound,
}

/// The outcome of a pass: its result, or the C side's message.
pub(crate) type Pass<T> = std::result::Result<T, String>;

/// `rc` and the message in `err` as a [`Pass`].
fn pass<T>(rc: c_int, err: &ErrBuf, result: T) -> Pass<T> {
    if rc == OK {
        Ok(result)
    } else {
        Err(err.message())
    }
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
            OK => Ok(Doc { z, pages: pages.max(0) as usize, fonts: FontsFound::default() }),
            OPEN_FAILED => {
                Err(EngineError::new(ErrorCode::InvalidPdf, format!("cannot open the PDF: {}", err.message())))
            }
            NEEDS_PASSWORD => Err(EngineError::encrypted_input()),
            _ => Err(EngineError::new(ErrorCode::EngineError, "compressing: no MuPDF context")),
        }
    }

    /// Pages of the document as opened.
    pub fn page_count(&self) -> usize {
        self.pages
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

    /// Sampled functions stored by their corners.
    pub fn reduce_functions(&mut self) -> Pass<()> {
        let mut err = ErrBuf::new();
        let rc = unsafe { engine_cz_reduce_functions(self.z, err.ptr(), 512) };
        pass(rc, &err, ())
    }

    /// MuPDF's rewriter over the images the pass left (as `o` says), /OutputIntents dropped,
    /// spot palettes flattened. The result also when the pass failed: whether the rewriter
    /// ran decides the next path.
    pub fn other_images(&mut self, o: &ImageOptions) -> (ImagesResult, Pass<()>) {
        let (mut r, mut err) = (ImagesResult::default(), ErrBuf::new());
        let rc = unsafe { engine_cz_other_images(self.z, o, &mut r, err.ptr(), 512) };
        (r, pass(rc, &err, ()))
    }

    /// Private data (`drop_private`) and unreachable objects deleted.
    pub fn prune(&mut self, drop_private: bool) -> Pass<()> {
        let mut err = ErrBuf::new();
        let rc = unsafe { engine_cz_prune(self.z, drop_private as c_int, err.ptr(), 512) };
        pass(rc, &err, ())
    }

    /// The fonts pass's first half: MuPDF's subsetter, then the Type 1 programs and CMaps
    /// copied out ([`Doc::type1_copies`], [`Doc::cmap_copies`]). Ok(true) when the
    /// subsetter ran through.
    pub fn fonts_collect(&mut self) -> Pass<bool> {
        let mut err = ErrBuf::new();
        self.fonts = FontsFound::default();
        let rc = unsafe { engine_cz_fonts_collect(self.z, &mut self.fonts, err.ptr(), 512) };
        pass(rc, &err, self.fonts.subset != 0)
    }

    /// The Type 1 programs copied out by [`Doc::fonts_collect`].
    pub fn type1_copies(&self) -> Vec<Type1Copy<'_>> {
        (0..self.fonts.type1)
            .filter_map(|i| {
                // SAFETY: the C side keeps the copies until fonts_install, which needs `&mut self`.
                let r = unsafe { engine_cz_type1_program(self.z, i).as_ref() }?;
                Some(Type1Copy {
                    data: unsafe { bytes(r.data, r.len) },
                    length1: r.length1 as usize,
                    length2: r.length2 as usize,
                    names: unsafe { bytes(r.names, r.names_len) },
                    keep_all: r.keep_all != 0,
                })
            })
            .collect()
    }

    /// The ToUnicode CMaps copied out by [`Doc::fonts_collect`].
    pub fn cmap_copies(&self) -> Vec<CmapCopy<'_>> {
        (0..self.fonts.cmaps)
            .filter_map(|i| {
                // SAFETY: as in type1_copies; `used` has 256 entries.
                let r = unsafe { engine_cz_cmap_program(self.z, i).as_ref() }?;
                Some(CmapCopy { data: unsafe { bytes(r.data, r.len) }, used: unsafe { bytes(r.used, 256) } })
            })
            .collect()
    }

    /// The fonts pass's second half: `type1[i]` (a CFF program, `None` to keep) for Type 1
    /// copy i, `cmaps[i]` for CMap copy i, and the C side's own cuts.
    pub fn fonts_install(&mut self, type1: &[Option<Vec<u8>>], cmaps: &[Option<Vec<u8>>]) -> Pass<FontsInstalled> {
        let raw = |v: &[Option<Vec<u8>>]| -> Vec<RawBytes> {
            v.iter()
                .map(|b| match b {
                    Some(b) => RawBytes { data: b.as_ptr(), len: b.len() },
                    None => RawBytes { data: std::ptr::null(), len: 0 },
                })
                .collect()
        };
        let (t, c) = (raw(type1), raw(cmaps));
        let (mut r, mut err) = (FontsInstalled::default(), ErrBuf::new());
        let rc = unsafe {
            engine_cz_fonts_install(
                self.z,
                t.as_ptr(),
                t.len() as c_int,
                c.as_ptr(),
                c.len() as c_int,
                &mut r,
                err.ptr(),
                512,
            )
        };
        self.fonts = FontsFound::default();
        pass(rc, &err, r)
    }

    /// Metadata deflated (PDF/A files' too when `pdfa_too`), ASCII layers off, flate streams
    /// re-deflated.
    pub fn streams(&mut self, pdfa_too: bool) -> Pass<()> {
        let mut err = ErrBuf::new();
        let rc = unsafe { engine_cz_streams(self.z, pdfa_too as c_int, err.ptr(), 512) };
        pass(rc, &err, ())
    }

    /// Duplicates merged and the document saved to `output` ([`c_path`]).
    pub fn save(&mut self, output: &CStr) -> Pass<()> {
        let mut err = ErrBuf::new();
        let rc = unsafe { engine_cz_save(self.z, output.as_ptr(), err.ptr(), 512) };
        pass(rc, &err, ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    extern "C" {
        fn engine_deflate_pixels(input: *const c_uchar, len: usize, out: *mut c_uchar, cap: usize) -> usize;
    }

    #[test]
    fn the_pixel_deflater_writes_zlib_data_that_inflates_back_and_refuses_a_short_buffer() {
        use std::io::Read;
        // A chart-like image: flat runs with a few edges per row.
        let pixels: Vec<u8> =
            (0..300 * 200 * 3).map(|i| if (i / 3) % 300 < 40 + (i / 900) % 7 { 20 } else { 240 }).collect();
        let mut out = vec![0u8; pixels.len() + 64];
        let n = unsafe { engine_deflate_pixels(pixels.as_ptr(), pixels.len(), out.as_mut_ptr(), out.len()) };
        assert!(n > 0 && n < pixels.len() / 10, "{n} bytes");
        let mut back = Vec::new();
        flate2::read::ZlibDecoder::new(&out[..n]).read_to_end(&mut back).unwrap();
        assert_eq!(back, pixels);
        // Too small for the result: 0 (the C side then deflates with MuPDF's zlib).
        assert_eq!(unsafe { engine_deflate_pixels(pixels.as_ptr(), pixels.len(), out.as_mut_ptr(), n - 1) }, 0);
    }
}
