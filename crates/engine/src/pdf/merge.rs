//! Merge: concatenates 2..=50 PDFs in order.
//!
//! The first input is the base: its catalog survives whole (outline, named
//! destinations, form, metadata, page labels, structure tree, optional content,
//! attachments). Pages of every further input are grafted in with one graft map per
//! input, so resources shared between its pages are copied once, and so are:
//!
//! - annotations, including links and form widgets (their `/P` and destinations follow
//!   the grafted pages);
//! - the outline, appended after the base's top-level entries;
//! - named destinations used by links and outline entries, rewritten as explicit
//!   destinations first (the name trees themselves are not merged);
//! - form fields, appended to the base's `/AcroForm /Fields` (fields with the same
//!   fully-qualified name in two inputs then behave as one field in viewers);
//! - optional content groups, registered in the base's `/OCProperties`.
//!
//! Not carried over from the further inputs: their structure trees (tagging), page
//! labels, article threads, document-level JavaScript, attachments and metadata.
//! XFA form data is removed from the result, since it would describe only part of the
//! merged document. The output is never encrypted; inputs that need a password are
//! refused with `encrypted_input`.

use std::path::{Path, PathBuf};

use mupdf::pdf::{Encryption, PdfDocument, PdfObject};

use crate::control::JobControl;
use crate::error::{EngineError, MuPdfResultExt, Result};
use crate::pdf::content::repair_page_contents;
use crate::pdf::links::resolve_named_destinations;
use crate::pdf::open::{open_pdf, PasswordPolicy, Source};
use crate::pdf::save::{save_pdf, write_options};
use crate::pdf::tree::flatten_inherited;
use crate::pdf::PageOpResult;

/// Smallest and largest number of inputs.
pub const MERGE_MIN_INPUTS: usize = 2;
/// See [`MERGE_MIN_INPUTS`].
pub const MERGE_MAX_INPUTS: usize = 50;

/// Merges `inputs` in order into `output`.
pub fn merge(inputs: &[PathBuf], output: &Path, control: &JobControl) -> Result<PageOpResult> {
    if !(MERGE_MIN_INPUTS..=MERGE_MAX_INPUTS).contains(&inputs.len()) {
        return Err(EngineError::invalid_options(format!(
            "merge takes {MERGE_MIN_INPUTS} to {MERGE_MAX_INPUTS} PDFs, got {}",
            inputs.len()
        )));
    }
    control.checkpoint()?;
    // Open everything first: a bad input fails fast and the total is known for progress.
    let mut opened = Vec::with_capacity(inputs.len());
    for (i, path) in inputs.iter().enumerate() {
        let doc =
            open_pdf(Source::Path(path), PasswordPolicy::Refuse, None).map_err(|e| in_input(e, i + 1, inputs.len()))?;
        opened.push(doc);
        control.checkpoint()?;
    }
    let total: usize = opened.iter().map(|o| o.page_count()).sum();
    control.start(total as u64)?;

    let mut iter = opened.into_iter();
    let base = iter.next().expect("at least two inputs");
    let mut dst = base.doc;
    repair_page_contents(base.pages.iter().enumerate().map(|(i, p)| (i + 1, p)), control)
        .map_err(|e| in_input(e, 1, inputs.len()))?;
    for (k, src) in iter.enumerate() {
        append_document(&mut dst, &src.doc, src.pages, control).map_err(|e| in_input(e, k + 2, inputs.len()))?;
    }
    strip_xfa(&dst)?;

    control.checkpoint()?;
    let output_bytes = save_pdf(&dst, output, write_options(Encryption::None), control)?;
    control.finish();
    Ok(PageOpResult { pages_processed: total as u32, page_count: total as u32, output_bytes })
}

/// Says which input an error is about.
fn in_input(e: EngineError, index: usize, count: usize) -> EngineError {
    EngineError::new(e.code, format!("input {index} of {count}: {}", e.message))
}

fn append_document(
    dst: &mut PdfDocument,
    src: &PdfDocument,
    mut pages: Vec<PdfObject>,
    control: &JobControl,
) -> Result<()> {
    let ctx = "appending pages";
    repair_page_contents(pages.iter().enumerate().map(|(i, p)| (i + 1, p)), control)?;
    resolve_named_destinations(src, &pages)?;
    // The source is a private in-memory copy: edit its pages so grafting copies just
    // the page and what it uses. A `/Parent` link would drag in the whole source page
    // tree; structure and bead links would drag in structures we do not merge.
    for page in pages.iter_mut() {
        flatten_inherited(page)?;
        for key in ["Parent", "StructParents", "B"] {
            page.dict_delete(key).ctx(ctx)?;
        }
    }
    let mut map = dst.new_graft_map().ctx(ctx)?;
    let first = dst.page_count().ctx(ctx)?;
    for (at, page) in (first..).zip(&pages) {
        let grafted = map.graft_object(page).ctx(ctx)?;
        dst.insert_page(at, &grafted).ctx(ctx)?;
    }

    let src_catalog = src.catalog().ctx(ctx)?;
    let mut dst_catalog = dst.catalog().ctx(ctx)?;
    append_outline(dst, &mut dst_catalog, &src_catalog, &mut map)?;
    append_fields(dst, &mut dst_catalog, &src_catalog, &mut map)?;
    append_optional_content(dst, &mut dst_catalog, &src_catalog, &mut map)?;
    Ok(())
}

/// Gets `parent[key]`, creating it as an empty dictionary (or array) when missing.
fn get_or_insert(
    doc: &mut PdfDocument,
    parent: &mut PdfObject,
    key: &str,
    array: bool,
    indirect: bool,
) -> Result<PdfObject> {
    let ctx = "merging the catalog";
    let want = |o: &PdfObject| {
        if array {
            o.is_array().unwrap_or(false)
        } else {
            o.is_dict().unwrap_or(false)
        }
    };
    if let Some(existing) = parent.get_dict(key).ctx(ctx)? {
        if want(&existing) {
            return Ok(existing);
        }
    }
    let fresh = if array { doc.new_array().ctx(ctx)? } else { doc.new_dict().ctx(ctx)? };
    let value = if indirect { doc.add_object(&fresh).ctx(ctx)? } else { fresh };
    parent.dict_put(key, value.try_clone().ctx(ctx)?).ctx(ctx)?;
    // Re-read so the returned handle is the object stored in the parent.
    parent
        .get_dict(key)
        .ctx(ctx)?
        .ok_or_else(|| EngineError::new(crate::error::ErrorCode::EngineError, "catalog entry vanished"))
}

fn append_outline(
    dst: &mut PdfDocument,
    dst_catalog: &mut PdfObject,
    src_catalog: &PdfObject,
    map: &mut mupdf::pdf::PdfGraftMap,
) -> Result<()> {
    let ctx = "merging the outline";
    let Some(src_root) = src_catalog.get_dict("Outlines").ctx(ctx)? else {
        return Ok(());
    };
    let (Some(first), Some(last)) = (src_root.get_dict("First").ctx(ctx)?, src_root.get_dict("Last").ctx(ctx)?) else {
        return Ok(());
    };
    let g_first = map.graft_object(&first).ctx(ctx)?;
    let mut g_last = map.graft_object(&last).ctx(ctx)?;

    let mut root = get_or_insert(dst, dst_catalog, "Outlines", false, true)?;
    if root.get_dict("Type").ctx(ctx)?.is_none() {
        root.dict_put("Type", PdfObject::new_name("Outlines").ctx(ctx)?).ctx(ctx)?;
    }
    let root_ref = dst_catalog
        .get_dict("Outlines")
        .ctx(ctx)?
        .ok_or_else(|| EngineError::new(crate::error::ErrorCode::EngineError, "outline vanished"))?;

    // Re-parent the grafted top level; the grafted copy of the source root is then
    // unreferenced and dropped when saving.
    let mut added = 0i32;
    let mut cur = Some(g_first.try_clone().ctx(ctx)?);
    let mut seen = std::collections::HashSet::new();
    while let Some(mut item) = cur {
        let num = crate::pdf::object::obj_num(&item);
        if !item.is_dict().unwrap_or(false) || (num != 0 && !seen.insert(num)) || added > 1_000_000 {
            break;
        }
        item.dict_put("Parent", root_ref.try_clone().ctx(ctx)?).ctx(ctx)?;
        added += 1;
        let next = item.get_dict("Next").ctx(ctx)?;
        if next.is_none() {
            g_last = item.try_clone().ctx(ctx)?;
        }
        cur = next;
    }
    if added == 0 {
        return Ok(());
    }

    let mut g_first = g_first;
    match root.get_dict("Last").ctx(ctx)? {
        Some(mut old_last) if root.get_dict("First").ctx(ctx)?.is_some() => {
            old_last.dict_put("Next", g_first.try_clone().ctx(ctx)?).ctx(ctx)?;
            g_first.dict_put("Prev", old_last).ctx(ctx)?;
        }
        _ => {
            g_first.dict_delete("Prev").ctx(ctx)?;
            root.dict_put("First", g_first.try_clone().ctx(ctx)?).ctx(ctx)?;
        }
    }
    root.dict_put("Last", g_last).ctx(ctx)?;
    let old_count = root.get_dict("Count").ctx(ctx)?.map(|c| c.as_int().unwrap_or(0).abs()).unwrap_or(0);
    root.dict_put("Count", PdfObject::new_int(old_count + added).ctx(ctx)?).ctx(ctx)?;
    Ok(())
}

fn append_fields(
    dst: &mut PdfDocument,
    dst_catalog: &mut PdfObject,
    src_catalog: &PdfObject,
    map: &mut mupdf::pdf::PdfGraftMap,
) -> Result<()> {
    let ctx = "merging form fields";
    let Some(src_form) = src_catalog.get_dict("AcroForm").ctx(ctx)? else {
        return Ok(());
    };
    let Some(src_fields) = src_form.get_dict("Fields").ctx(ctx)? else {
        return Ok(());
    };
    if !src_fields.is_array().unwrap_or(false) || src_fields.len().unwrap_or(0) == 0 {
        return Ok(());
    }
    let mut form = get_or_insert(dst, dst_catalog, "AcroForm", false, true)?;
    // Field appearances reference the form's default resources and appearance.
    for key in ["DR", "DA"] {
        if form.get_dict(key).ctx(ctx)?.is_none() {
            if let Some(v) = src_form.get_dict(key).ctx(ctx)? {
                form.dict_put(key, map.graft_object(&v).ctx(ctx)?).ctx(ctx)?;
            }
        }
    }
    let mut fields = get_or_insert(dst, &mut form, "Fields", true, false)?;
    for field in src_fields.array_iter().ctx(ctx)? {
        let field = field.ctx(ctx)?;
        fields.array_push(map.graft_object(&field).ctx(ctx)?).ctx(ctx)?;
    }
    Ok(())
}

fn append_optional_content(
    dst: &mut PdfDocument,
    dst_catalog: &mut PdfObject,
    src_catalog: &PdfObject,
    map: &mut mupdf::pdf::PdfGraftMap,
) -> Result<()> {
    let ctx = "merging optional content";
    let Some(src_oc) = src_catalog.get_dict("OCProperties").ctx(ctx)? else {
        return Ok(());
    };
    let Some(src_ocgs) = src_oc.get_dict("OCGs").ctx(ctx)? else {
        return Ok(());
    };
    if !src_ocgs.is_array().unwrap_or(false) {
        return Ok(());
    }
    let mut oc = get_or_insert(dst, dst_catalog, "OCProperties", false, false)?;
    let mut ocgs = get_or_insert(dst, &mut oc, "OCGs", true, false)?;
    for ocg in src_ocgs.array_iter().ctx(ctx)? {
        ocgs.array_push(map.graft_object(&ocg.ctx(ctx)?).ctx(ctx)?).ctx(ctx)?;
    }
    let mut config = get_or_insert(dst, &mut oc, "D", false, false)?;
    // Groups the source shows hidden by default stay hidden.
    if let Some(off) = src_oc.get_dict("D").ctx(ctx)?.map(|d| d.get_dict("OFF")).transpose().ctx(ctx)?.flatten() {
        if off.is_array().unwrap_or(false) {
            let mut dst_off = get_or_insert(dst, &mut config, "OFF", true, false)?;
            for g in off.array_iter().ctx(ctx)? {
                dst_off.array_push(map.graft_object(&g.ctx(ctx)?).ctx(ctx)?).ctx(ctx)?;
            }
        }
    }
    Ok(())
}

fn strip_xfa(doc: &PdfDocument) -> Result<()> {
    let mut catalog = doc.catalog().ctx("updating the form")?;
    if let Some(mut form) = catalog.get_dict("AcroForm").ctx("updating the form")? {
        form.dict_delete("XFA").ctx("updating the form")?;
    }
    catalog.dict_delete("NeedsRendering").ctx("updating the form")?;
    Ok(())
}
