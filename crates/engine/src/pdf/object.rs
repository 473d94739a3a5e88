//! Small questions about one PDF object (its object number, whether it is a given name),
//! shared by the page tree, destinations, content checks and merge.

use mupdf::pdf::PdfObject;

/// Object number of an indirect reference; 0 for direct objects.
pub(crate) fn obj_num(obj: &PdfObject) -> i32 {
    if obj.is_indirect().unwrap_or(false) {
        obj.as_indirect().unwrap_or(0)
    } else {
        0
    }
}

/// Whether `obj` is the name `/name`.
pub(crate) fn is_name(obj: &PdfObject, name: &str) -> bool {
    obj.is_name().unwrap_or(false) && obj.as_name().map(|n| n == name.as_bytes()).unwrap_or(false)
}
