//! Copying part of one parsed document into a new one (csrc/graft.c): the objects
//! reachable from what is copied, each once per target, streams copied raw (never
//! decoded).
//!
//! Unlike MuPDF's graft map, source objects can be redirected before copying starts:
//! split points every page that is not in a part at one empty placeholder, so a link,
//! outline item or annotation that leads to another page never pulls that page, its
//! resources and (through `/Parent`) the whole page tree into the part. The copy runs in
//! C because it makes several MuPDF calls per object, which through the crate's
//! per-call exception wrapper cost more than the copy itself (2x qpdf's split time on
//! geotopo-117-pages.pdf).
//!
//! The crate does not expose its raw pointers; [`raw`] and [`owned`] read them out of
//! its one-pointer handle types (`PdfObject`, `Context`), checked by size at compile
//! time.

use std::ffi::{c_char, c_int, c_void, CStr};

use mupdf::pdf::{PdfDocument, PdfObject};
use mupdf::Context;

use crate::error::{EngineError, ErrorCode, MuPdfResultExt, Result};

const _: () = assert!(std::mem::size_of::<PdfObject>() == std::mem::size_of::<*mut c_void>());
const _: () = assert!(std::mem::size_of::<Context>() == std::mem::size_of::<*mut c_void>());
const _: () = assert!(std::mem::size_of::<mupdf::Font>() == std::mem::size_of::<*mut c_void>());

extern "C" {
    fn engine_graft_new(
        ctx: *mut c_void,
        src: *mut c_void,
        dst: *mut c_void,
        err: *mut c_char,
        errlen: c_int,
    ) -> *mut c_void;
    fn engine_graft_drop(ctx: *mut c_void, g: *mut c_void);
    fn engine_graft_redirect(
        ctx: *mut c_void,
        g: *mut c_void,
        src: c_int,
        dst: c_int,
        err: *mut c_char,
        errlen: c_int,
    ) -> c_int;
    fn engine_graft_copy(
        ctx: *mut c_void,
        g: *mut c_void,
        obj: *mut c_void,
        skip_parent: c_int,
        out: *mut *mut c_void,
        err: *mut c_char,
        errlen: c_int,
    ) -> c_int;
    fn fz_font_name(ctx: *mut c_void, font: *mut c_void) -> *const c_char;
}

/// A font's name, whatever its bytes: the crate's `Font::name` panics on a name that is not
/// UTF-8 (a PDF's `/BaseFont` can hold any bytes).
pub(crate) fn font_name(font: &mupdf::Font) -> String {
    // SAFETY: mupdf::Font is a single `*mut fz_font` field (size checked above), borrowed.
    let ptr = unsafe { std::mem::transmute_copy::<mupdf::Font, *mut c_void>(font) };
    // SAFETY: fz_font_name returns the font's own NUL-terminated name buffer (never throws).
    let name = unsafe { fz_font_name(context(), ptr) };
    if name.is_null() {
        return String::new();
    }
    unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned()
}

/// The `pdf_obj` pointer inside a crate object (borrowed).
pub(crate) fn raw(obj: &PdfObject) -> *mut c_void {
    // SAFETY: PdfObject is a single `*mut pdf_obj` field (size checked above).
    unsafe { std::mem::transmute_copy::<PdfObject, *mut c_void>(obj) }
}

/// A crate object owning the reference `ptr` (null is PDF null).
pub(crate) fn owned(ptr: *mut c_void) -> PdfObject {
    // SAFETY: as in `raw`; the C side returned a reference we now own, dropped by
    // PdfObject's Drop.
    unsafe { std::mem::transmute::<*mut c_void, PdfObject>(ptr) }
}

/// This thread's MuPDF context, the one the crate uses for its objects.
pub(crate) fn context() -> *mut c_void {
    let ctx = Context::get();
    // SAFETY: Context is a single `*mut fz_context` field without Drop (size checked).
    unsafe { std::mem::transmute_copy::<Context, *mut c_void>(&ctx) }
}

fn failed(what: &str, err: &[c_char; 512]) -> EngineError {
    let msg = unsafe { CStr::from_ptr(err.as_ptr()) }.to_string_lossy().into_owned();
    EngineError::new(ErrorCode::EngineError, format!("{what}: {msg}"))
}

/// Copies objects of one source document into `dst`. Used on one thread.
pub(crate) struct Grafter<'a> {
    dst: &'a mut PdfDocument,
    handle: *mut c_void,
}

impl<'a> Grafter<'a> {
    pub(crate) fn new(src: &PdfDocument, dst: &'a mut PdfDocument) -> Result<Self> {
        let (s, d) = (src.trailer().ctx("reading the trailer")?, dst.trailer().ctx("reading the trailer")?);
        let mut err = [0 as c_char; 512];
        let handle = unsafe { engine_graft_new(context(), raw(&s), raw(&d), err.as_mut_ptr(), 512) };
        if handle.is_null() {
            return Err(failed("starting a part", &err));
        }
        Ok(Grafter { dst, handle })
    }

    pub(crate) fn dst(&mut self) -> &mut PdfDocument {
        self.dst
    }

    /// Every reference to source object `src_num` becomes a reference to `dst_num`;
    /// the source object itself is not copied.
    pub(crate) fn redirect(&mut self, src_num: i32, dst_num: i32) -> Result<()> {
        let mut err = [0 as c_char; 512];
        let rc = unsafe { engine_graft_redirect(context(), self.handle, src_num, dst_num, err.as_mut_ptr(), 512) };
        if rc != 0 {
            return Err(failed("starting a part", &err));
        }
        Ok(())
    }

    /// Allocates the target object for source object `src_num`, filled in later by
    /// the caller; references to it resolve to the new object from now on.
    pub(crate) fn reserve(&mut self, src_num: i32) -> Result<PdfObject> {
        let r = self.dst.create_object().ctx("starting a part")?;
        self.redirect(src_num, r.as_indirect().ctx("starting a part")?)?;
        Ok(r)
    }

    /// Copies `obj` (direct or indirect) and everything it reaches; returns the copy,
    /// a reference for indirect objects. With `skip_parent`, a dictionary's `/Parent`
    /// is left out (pages: the old page tree stays behind).
    pub(crate) fn copy(&mut self, obj: &PdfObject, skip_parent: bool) -> Result<PdfObject> {
        let mut err = [0 as c_char; 512];
        let mut out = std::ptr::null_mut();
        let rc = unsafe {
            engine_graft_copy(context(), self.handle, raw(obj), skip_parent as c_int, &mut out, err.as_mut_ptr(), 512)
        };
        if rc != 0 {
            return Err(failed("copying objects into a part", &err));
        }
        Ok(owned(out))
    }
}

impl Drop for Grafter<'_> {
    fn drop(&mut self) {
        unsafe { engine_graft_drop(context(), self.handle) };
    }
}

/// Key-value pairs of a dictionary; null values are kept (the crate's iterator stops
/// at them: MuPDF's null is a null pointer).
pub(crate) fn dict_entries(dict: &PdfObject) -> Result<Vec<(PdfObject, PdfObject)>> {
    let ctx = "reading a dictionary";
    let len = dict.dict_len().ctx(ctx)? as i32;
    let mut out = Vec::with_capacity(len as usize);
    for i in 0..len {
        let Some(key) = dict.get_dict_key(i).ctx(ctx)? else {
            continue;
        };
        let val = dict.get_dict_val(i).ctx(ctx)?.unwrap_or_else(PdfObject::new_null);
        out.push((key, val));
    }
    Ok(out)
}
