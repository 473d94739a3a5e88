//! Pages read as untagged because MuPDF's marked-content lookups on them would run for
//! hours (csrc/mcid.c says when and why): for the operations that run or filter page
//! content (render, text extraction, redaction).

use std::ffi::c_void;

use mupdf::pdf::PdfDocument;

use crate::pdf::graft::{context, owned, raw};

extern "C" {
    fn engine_mcid_untag_costly_of(ctx: *mut c_void, trailer: *mut c_void) -> *mut c_void;
    fn engine_mcid_restore(ctx: *mut c_void, taken: *mut c_void);
}

/// The `/StructParents` taken from a document's costly pages. Dropping it leaves those pages
/// untagged (for documents that are only read); [`Untagged::restore`] puts the values back
/// before a save.
pub(crate) struct Untagged {
    taken: *mut c_void,
}

/// Takes `/StructParents` away from the pages of `doc` whose marked-content lookups would
/// read more than a few million entries.
pub(crate) fn untag_costly_pages(doc: &PdfDocument) -> Untagged {
    let taken = match doc.trailer() {
        Ok(trailer) => unsafe { engine_mcid_untag_costly_of(context(), raw(&trailer)) },
        Err(_) => std::ptr::null_mut(),
    };
    Untagged { taken }
}

impl Untagged {
    /// Puts back every value taken (the document must still be open).
    pub(crate) fn restore(mut self) {
        let taken = std::mem::replace(&mut self.taken, std::ptr::null_mut());
        unsafe { engine_mcid_restore(context(), taken) };
    }
}

impl Drop for Untagged {
    fn drop(&mut self) {
        if !self.taken.is_null() {
            // Frees the list only: the pages stay untagged.
            drop(owned(self.taken));
        }
    }
}
