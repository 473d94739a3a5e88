//! The engine's private MuPDF contexts (csrc/locks.c) take the mupdf crate's lock of
//! MuPDF's process-wide state; this hands that lock over once, before the first one.

use std::ffi::c_void;
use std::sync::Once;

extern "C" {
    fn engine_locks_adopt(crate_ctx: *mut c_void);
}

/// Call before making a private context (opening a document on the C side): the first
/// call adopts the lock functions of this thread's mupdf crate context.
pub(crate) fn share_locks() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // mupdf::Context is a single raw `*mut fz_context` field (its `inner`, not
        // public); the transmute does not compile if its size ever differs. Its
        // contexts never drop while the process runs (a thread's is cloned from one
        // base context), and only the lock functions are read from it.
        let ctx: *mut c_void = unsafe { std::mem::transmute::<mupdf::Context, *mut c_void>(mupdf::Context::get()) };
        unsafe { engine_locks_adopt(ctx) };
    });
}
