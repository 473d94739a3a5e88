//! The output intent: `GTS_PDFA1` with MuPDF's built-in sRGB ICC profile (the one its
//! DeviceRGB uses), so DeviceRGB and DeviceGray are allowed.

use std::ffi::{c_uchar, c_void};

use mupdf::pdf::{PdfDocument, PdfObject};
use mupdf::Buffer;

use crate::error::{EngineError, ErrorCode, MuPdfResultExt, Result};
use crate::pdf::graft::context;

extern "C" {
    fn engine_pdfa_srgb_icc(ctx: *mut c_void, data: *mut *const c_uchar) -> usize;
}

/// The `GTS_PDFA1` output intent with MuPDF's sRGB profile.
pub(super) fn output_intent(doc: &mut PdfDocument) -> Result<PdfObject> {
    let mut data: *const c_uchar = std::ptr::null();
    let len = unsafe { engine_pdfa_srgb_icc(context(), &mut data) };
    if len == 0 || data.is_null() {
        return Err(EngineError::new(ErrorCode::EngineError, "MuPDF has no built-in sRGB ICC profile"));
    }
    // SAFETY: the profile lives in MuPDF's colour context for the whole process.
    let icc = unsafe { std::slice::from_raw_parts(data, len) }.to_vec();
    let dict = doc.new_object_from_str("<< /N 3 >>").ctx("ICC profile")?;
    let profile = doc.add_stream(&Buffer::from_bytes(&icc).ctx("buffer")?, Some(&dict), false).ctx("ICC profile")?;
    let mut intent = doc
        .new_object_from_str(
            "<< /Type /OutputIntent /S /GTS_PDFA1 /OutputConditionIdentifier (sRGB IEC61966-2.1) \
             /RegistryName (http://www.color.org) /Info (sRGB IEC61966-2.1) >>",
        )
        .ctx("output intent")?;
    intent.dict_put("DestOutputProfile", profile).ctx("output intent")?;
    Ok(intent)
}
