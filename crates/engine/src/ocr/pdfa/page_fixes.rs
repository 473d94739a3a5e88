//! What PDF/A forbids in pages that can go without changing how they look: images'
//! `/Interpolate` (a rendering hint) and Link annotations without the Print flag.

use mupdf::pdf::{PdfDocument, PdfObject};

use super::objects::{get, items, name_is, F_PRINT};
use crate::error::{MuPdfResultExt, Result};

/// Removes `/Interpolate` from every image (soft masks and images of patterns, forms and
/// appearances included) and gives Link annotations the Print flag.
pub(super) fn fix_pages(doc: &mut PdfDocument) -> Result<()> {
    let objects = doc.count_objects().ctx("counting objects")?;
    for num in 1..objects as i32 {
        let Ok(mut obj) = doc.new_indirect(num, 0) else { continue };
        if obj.is_stream().unwrap_or(false)
            && name_is(&get(&obj, "Subtype"), b"Image")
            && get(&obj, "Interpolate").is_some()
        {
            obj.dict_delete("Interpolate").ctx("image interpolation")?;
        }
    }
    let count = doc.page_count().ctx("counting pages")?;
    for i in 0..count {
        let page = doc.find_page(i).ctx("finding the page")?;
        if let Some(annots) = get(&page, "Annots") {
            for mut annot in items(&annots) {
                if name_is(&get(&annot, "Subtype"), b"Link") {
                    let flags = get(&annot, "F").and_then(|v| v.as_int().ok()).unwrap_or(0);
                    annot.dict_put("F", PdfObject::new_int(flags | F_PRINT).ctx("flags")?).ctx("flags")?;
                }
            }
        }
    }
    Ok(())
}
