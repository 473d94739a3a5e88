//! A document opened in a MuPDF context of its own (csrc/render_thread.c), for one
//! thread: threads that share nothing do not wait on each other's locks (the
//! mupdf crate's per-thread contexts share one set of locks, one store and one glyph
//! cache). Used by the render threads (`src/pagework/render.rs`) and by the compress
//! content guard's text extraction (`src/pagework/compress/guard.rs`).

use std::ffi::{c_char, c_float, c_int, c_uchar, c_void, CStr, CString};
use std::path::Path;

use crate::error::{EngineError, ErrorCode, Result};
use crate::pdf::open::path_str;

/// Resource store (fonts, images, decoded streams) of all render threads together: the
/// size of the mupdf crate's one shared store, split between the threads.
const STORE_BYTES: usize = 256 << 20;
/// Smallest store of one thread.
const MIN_STORE_BYTES: usize = 32 << 20;

extern "C" {
    fn engine_rdoc_open(
        path: *const c_char,
        store: usize,
        out: *mut *mut c_void,
        err: *mut c_char,
        errlen: c_int,
    ) -> c_int;
    fn engine_rdoc_close(d: *mut c_void);
    fn engine_rdoc_render(
        d: *mut c_void,
        index: c_int,
        scale: c_float,
        pix: *mut *mut c_void,
        samples: *mut *mut c_uchar,
        w: *mut c_int,
        h: *mut c_int,
        n: *mut c_int,
        stride: *mut c_int,
        err: *mut c_char,
        errlen: c_int,
    ) -> c_int;
    fn engine_rdoc_drop_pixmap(d: *mut c_void, pix: *mut c_void);
    fn engine_rdoc_text(d: *mut c_void, index: c_int, out: *mut *mut u32, len: *mut usize) -> c_int;
    fn engine_rdoc_font_name(d: *mut c_void, slot: u32) -> *const c_char;
    fn engine_rdoc_free(p: *mut c_void);
    fn engine_rdoc_count_pages(d: *mut c_void) -> c_int;
    fn engine_rdoc_no_icc(d: *mut c_void);
}

/// In [`PageText::pairs`], the character of a line's end (its slot is 0).
pub(crate) const LINE_END: u32 = u32::MAX;

/// One page's structured text (csrc/render_thread.c, engine_rdoc_text).
pub(crate) struct PageText {
    ptr: *mut u32,
    len: usize,
}

impl PageText {
    /// (character, font slot) pairs in reading order, each line ended by a
    /// ([`LINE_END`], 0) pair; a character without a font has the slot `LINE_END`.
    pub fn pairs(&self) -> &[[u32; 2]] {
        if self.ptr.is_null() {
            return &[];
        }
        // The C side wrote `len` pairs of u32 into one malloc'd block.
        unsafe { std::slice::from_raw_parts(self.ptr as *const [u32; 2], self.len) }
    }
}

impl Drop for PageText {
    fn drop(&mut self) {
        unsafe { engine_rdoc_free(self.ptr as *mut c_void) };
    }
}

fn message(buf: &[c_char]) -> String {
    unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned()
}

/// An open document with its private context; used from one thread at a time.
pub(crate) struct PrivateDoc {
    d: *mut c_void,
}

// The context and document move with the handle and are never shared.
unsafe impl Send for PrivateDoc {}

impl Drop for PrivateDoc {
    fn drop(&mut self) {
        unsafe { engine_rdoc_close(self.d) };
    }
}

/// A rendered page: samples owned by MuPDF until drop.
pub(crate) struct Raster<'a> {
    doc: &'a PrivateDoc,
    pix: *mut c_void,
    samples: *const u8,
    pub width: u32,
    pub height: u32,
    /// Bytes per pixel (3: RGB).
    pub n: usize,
    pub stride: usize,
}

impl Raster<'_> {
    pub fn samples(&self) -> &[u8] {
        unsafe { std::slice::from_raw_parts(self.samples, self.stride * self.height as usize) }
    }
}

impl Drop for Raster<'_> {
    fn drop(&mut self) {
        unsafe { engine_rdoc_drop_pixmap(self.doc.d, self.pix) };
    }
}

impl PrivateDoc {
    /// Opens `path` for one of `threads` threads (they split the resource store).
    pub fn open(path: &Path, threads: usize) -> Result<PrivateDoc> {
        let store = (STORE_BYTES / threads.max(1)).max(MIN_STORE_BYTES);
        let c = CString::new(path_str(path)?).map_err(|_| EngineError::invalid_options("path has a NUL byte"))?;
        let mut d = std::ptr::null_mut();
        let mut err = [0 as c_char; 512];
        crate::pdf::private_context::share_locks();
        if unsafe { engine_rdoc_open(c.as_ptr(), store, &mut d, err.as_mut_ptr(), err.len() as c_int) } != 0 {
            return Err(EngineError::new(ErrorCode::EngineError, format!("opening the PDF: {}", message(&err))));
        }
        Ok(PrivateDoc { d })
    }

    /// Turns colour management off (for text extraction, which ignores colour).
    pub fn without_icc(self) -> Self {
        unsafe { engine_rdoc_no_icc(self.d) };
        self
    }

    /// The page count, `None` when MuPDF cannot read it.
    pub fn page_count(&self) -> Option<usize> {
        usize::try_from(unsafe { engine_rdoc_count_pages(self.d) }).ok()
    }

    /// Page `index`'s structured text (default options, annotations and widgets
    /// included, as the mupdf crate's `Page::to_text_page` with no flags); `None` when
    /// it cannot be extracted.
    pub fn text(&self, index: usize) -> Option<PageText> {
        let (mut ptr, mut len) = (std::ptr::null_mut(), 0usize);
        let rc = unsafe { engine_rdoc_text(self.d, c_int::try_from(index).ok()?, &mut ptr, &mut len) };
        let text = PageText { ptr, len };
        (rc == 0).then_some(text)
    }

    /// The name of the font in `slot` of [`PageText::pairs`] (empty for none).
    pub fn font_name(&self, slot: u32) -> String {
        let p = unsafe { engine_rdoc_font_name(self.d, slot) };
        if p.is_null() {
            return String::new();
        }
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    /// Page `index` (0-based) at `dpi`, RGB without alpha, annotations and widgets
    /// included (as `render_rgb` in src/pagework/render.rs). The caller has checked the raster size.
    pub fn render(&self, index: usize, dpi: u32) -> Result<Raster<'_>> {
        let mut pix = std::ptr::null_mut();
        let mut samples = std::ptr::null_mut();
        let (mut w, mut h, mut n, mut stride): (c_int, c_int, c_int, c_int) = (0, 0, 0, 0);
        let mut err = [0 as c_char; 512];
        let rc = unsafe {
            engine_rdoc_render(
                self.d,
                index as c_int,
                dpi as f32 / 72.0,
                &mut pix,
                &mut samples,
                &mut w,
                &mut h,
                &mut n,
                &mut stride,
                err.as_mut_ptr(),
                err.len() as c_int,
            )
        };
        if rc != 0 || pix.is_null() {
            return Err(EngineError::new(
                ErrorCode::EngineError,
                format!("rendering page {}: {}", index + 1, message(&err)),
            ));
        }
        Ok(Raster {
            doc: self,
            pix,
            samples,
            width: w as u32,
            height: h as u32,
            n: n as usize,
            stride: stride as usize,
        })
    }
}
