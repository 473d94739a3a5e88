//! The page tree: listing page objects and rebuilding the tree in a new order.
//!
//! Pages are rearranged by building one flat `/Pages` node whose `/Kids` are the kept
//! page objects, after copying inherited attributes onto each page so nothing depends on
//! the old intermediate nodes. Only dictionaries are touched; content streams are never
//! parsed.

use mupdf::pdf::{PdfDocument, PdfObject};

use crate::error::{EngineError, ErrorCode, MuPdfResultExt, Result};
use crate::pdf::object::{is_name, obj_num};

/// Attributes a page may inherit from its ancestors (ISO 32000-2, 7.7.3.4).
const INHERITABLE: [&str; 4] = ["Resources", "MediaBox", "CropBox", "Rotate"];

/// The page objects (indirect references) in document order, per MuPDF's page tree.
pub(crate) fn page_refs(doc: &PdfDocument, count: usize) -> Result<Vec<PdfObject>> {
    let mut pages = Vec::with_capacity(count);
    for i in 0..count {
        let page = doc.find_page(i as i32).map_err(|e| {
            EngineError::new(
                ErrorCode::InvalidPdf,
                format!(
                    "page {} of {count} cannot be found in the page tree: {}",
                    i + 1,
                    crate::error::mupdf_message(&e)
                ),
            )
        })?;
        pages.push(page);
    }
    Ok(pages)
}

/// Last resort for a broken page tree (MuPDF finds no pages, or the tree's count
/// lies): every `/Type /Page` dictionary in the file, in object-number order, except
/// that a linearized file's first page (its `/O`) comes first. Only meaningful after
/// every object was loaded, so MuPDF's repair has already run.
pub(crate) fn pages_by_scan(doc: &PdfDocument) -> Result<Vec<PdfObject>> {
    let len = doc.xref_len().ctx("scanning for pages")?;
    let mut pages = Vec::new();
    let mut first_page = None;
    for num in 1..len {
        let Ok(Some(obj)) = doc.xref_object(num as i32) else {
            continue;
        };
        if !obj.is_dict().unwrap_or(false) {
            continue;
        }
        if let Ok(Some(o)) = obj.get_dict("O") {
            if obj.get_dict("Linearized").ok().flatten().is_some() {
                first_page = o.as_int().ok();
            }
        }
        let is_page = obj.get_dict("Type").ok().flatten().is_some_and(|t| is_name(&t, "Page"));
        if is_page {
            pages.push(doc.new_indirect(num as i32, 0).ctx("scanning for pages")?);
        }
    }
    if let Some(first) = first_page {
        if let Some(pos) = pages.iter().position(|p| obj_num(p) == first) {
            let page = pages.remove(pos);
            pages.insert(0, page);
        }
    }
    Ok(pages)
}

/// Copies inherited attributes onto the page itself.
pub(crate) fn flatten_inherited(page: &mut PdfObject) -> Result<()> {
    for key in INHERITABLE {
        if page.get_dict(key).ctx("reading a page")?.is_some() {
            continue;
        }
        if let Some(value) = page.get_dict_inheritable(key).ctx("reading a page")? {
            page.dict_put(key, value).ctx("updating a page")?;
        }
    }
    Ok(())
}

/// Replaces the page tree with a single node listing `pages` in this order.
/// Every page listed must belong to `doc`.
pub(crate) fn install_page_tree(doc: &mut PdfDocument, pages: &mut [PdfObject]) -> Result<()> {
    for page in pages.iter_mut() {
        flatten_inherited(page)?;
    }
    let mut kids = doc.new_array_with_capacity(pages.len() as i32).ctx("building the page tree")?;
    for page in pages.iter() {
        kids.array_push(page.try_clone().ctx("building the page tree")?).ctx("building the page tree")?;
    }
    let mut node = doc.new_dict().ctx("building the page tree")?;
    node.dict_put("Type", PdfObject::new_name("Pages").ctx("building the page tree")?).ctx("building the page tree")?;
    node.dict_put("Kids", kids).ctx("building the page tree")?;
    node.dict_put("Count", PdfObject::new_int(pages.len() as i32).ctx("building the page tree")?)
        .ctx("building the page tree")?;
    let node_ref = doc.add_object(&node).ctx("building the page tree")?;
    for page in pages.iter_mut() {
        page.dict_put("Parent", node_ref.try_clone().ctx("building the page tree")?).ctx("building the page tree")?;
    }
    let mut catalog = doc.catalog().ctx("reading the catalog")?;
    catalog.dict_put("Pages", node_ref).ctx("building the page tree")?;
    Ok(())
}

/// Reads `/Rotate` (inherited if needed), normalised to 0, 90, 180 or 270.
pub(crate) fn page_rotation(page: &PdfObject) -> Result<i32> {
    let raw = match page.get_dict_inheritable("Rotate").ctx("reading a page")? {
        Some(v) if v.is_number().unwrap_or(false) => v.as_int().unwrap_or(0),
        _ => 0,
    };
    // Viewers round odd values to a multiple of 90; do the same before adding.
    let r = raw.rem_euclid(360);
    Ok((r + 45) / 90 * 90 % 360)
}
