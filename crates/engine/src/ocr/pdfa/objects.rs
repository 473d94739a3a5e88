//! Reading PDF objects the way the checks and the conversion need: absent, null and
//! wrongly-typed values all read as nothing.

use mupdf::pdf::PdfObject;

/// Annotation flags: Invisible, Hidden, Print, NoView, ToggleNoView.
pub(super) const F_INVISIBLE: i32 = 1;
pub(super) const F_HIDDEN: i32 = 2;
pub(super) const F_PRINT: i32 = 4;
pub(super) const F_NOVIEW: i32 = 32;
pub(super) const F_TOGGLENOVIEW: i32 = 256;

pub(super) fn name_is(obj: &Option<PdfObject>, name: &[u8]) -> bool {
    obj.as_ref().is_some_and(|o| o.is_name().unwrap_or(false) && o.as_name().map(|n| n == name).unwrap_or(false))
}

pub(super) fn name_of(obj: &Option<PdfObject>) -> Option<Vec<u8>> {
    obj.as_ref().filter(|o| o.is_name().unwrap_or(false)).and_then(|o| o.as_name().ok())
}

pub(super) fn get(obj: &PdfObject, key: &str) -> Option<PdfObject> {
    obj.get_dict(key).ok().flatten().filter(|o| !o.is_null().unwrap_or(true))
}

pub(super) fn is_dict(obj: &PdfObject) -> bool {
    obj.is_dict().unwrap_or(false)
}

/// Values of a dictionary (an empty list for anything else).
pub(super) fn values(dict: &PdfObject) -> Vec<PdfObject> {
    if !is_dict(dict) {
        return Vec::new();
    }
    let n = dict.dict_len().unwrap_or(0);
    (0..n).filter_map(|i| dict.get_dict_val(i as i32).ok().flatten()).collect()
}

/// Items of an array (an empty list for anything else).
pub(super) fn items(array: &PdfObject) -> Vec<PdfObject> {
    if !array.is_array().unwrap_or(false) {
        return Vec::new();
    }
    let n = array.len().unwrap_or(0);
    (0..n).filter_map(|i| array.get_array(i as i32).ok().flatten()).collect()
}

pub(super) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
