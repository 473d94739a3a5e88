//! Destinations: resolving named destinations and dropping references to removed pages.
//!
//! After pages are deleted (delete_pages, split) the outline, link annotations, the
//! named-destination tree, `/OpenAction` and form fields may still point at the removed
//! page objects. Left alone they would keep those pages' resources alive in the output
//! and lead viewers nowhere, so they are pruned here. Merge uses the same resolution to
//! turn named destinations of appended documents into explicit ones, because their name
//! trees are not carried over.

use std::collections::{HashMap, HashSet};

use mupdf::pdf::{PdfDocument, PdfObject};

use crate::error::{MuPdfResultExt, Result};
use crate::pdf::object::{is_name, obj_num};

/// Caps that keep hostile (cyclic, absurdly deep) structures bounded.
const MAX_DEPTH: usize = 64;
const MAX_ITEMS: usize = 1_000_000;

fn dest_key(obj: &PdfObject) -> Option<Vec<u8>> {
    if obj.is_string().unwrap_or(false) {
        obj.as_bytes().ok()
    } else if obj.is_name().unwrap_or(false) {
        obj.as_name().ok()
    } else {
        None
    }
}

/// Named destinations of a document: the `/Names /Dests` tree and the PDF 1.1
/// `/Dests` dictionary of the catalog.
pub(crate) struct NamedDests {
    map: HashMap<Vec<u8>, PdfObject>,
    /// Names known to lead to a removed page although the document no longer lists
    /// them (split leaves them out of a part's tree, see `part_dests.rs`).
    gone: HashSet<Vec<u8>>,
}

impl NamedDests {
    pub(crate) fn load(doc: &PdfDocument) -> Result<Self> {
        let mut map = HashMap::new();
        let catalog = doc.catalog().ctx("reading the catalog")?;
        if let Some(dests) = catalog.get_dict("Dests").ctx("reading destinations")? {
            if dests.is_dict().unwrap_or(false) {
                for entry in dests.dict_iter().ctx("reading destinations")? {
                    let (k, v) = entry.ctx("reading destinations")?;
                    if let Ok(k) = k.as_name() {
                        map.insert(k, v);
                    }
                }
            }
        }
        if let Some(tree) = catalog
            .get_dict("Names")
            .ctx("reading the name tree")?
            .map(|n| n.get_dict("Dests"))
            .transpose()
            .ctx("reading the name tree")?
            .flatten()
        {
            let mut seen = HashSet::new();
            collect_name_tree(&tree, 0, &mut seen, &mut map)?;
        }
        Ok(Self { map, gone: HashSet::new() })
    }

    /// The explicit destination array a destination value leads to, if any.
    pub(crate) fn explicit(&self, dest: &PdfObject) -> Option<PdfObject> {
        let mut value = match dest_key(dest) {
            Some(key) => self.map.get(&key)?.try_clone().ok()?,
            None => dest.try_clone().ok()?,
        };
        if value.is_dict().unwrap_or(false) {
            value = value.get_dict("D").ok()??;
        }
        value.is_array().unwrap_or(false).then_some(value)
    }

    /// Object number of the page a destination points at; `None` when it points
    /// elsewhere (remote file, page number, unresolvable name).
    pub(crate) fn target_page(&self, dest: &PdfObject) -> Option<i32> {
        if !self.gone.is_empty() && dest_key(dest).is_some_and(|k| self.gone.contains(&k)) {
            // 0 is no object's number, so no kept page's.
            return Some(0);
        }
        let array = self.explicit(dest)?;
        let first = array.get_array(0).ok()??;
        let num = obj_num(&first);
        (num != 0).then_some(num)
    }
}

pub(crate) fn collect_name_tree(
    node: &PdfObject,
    depth: usize,
    seen: &mut HashSet<i32>,
    map: &mut HashMap<Vec<u8>, PdfObject>,
) -> Result<()> {
    if depth > MAX_DEPTH || map.len() > MAX_ITEMS || !node.is_dict().unwrap_or(false) {
        return Ok(());
    }
    let num = obj_num(node);
    if num != 0 && !seen.insert(num) {
        return Ok(());
    }
    if let Some(names) = node.get_dict("Names").ctx("reading the name tree")? {
        if names.is_array().unwrap_or(false) {
            let len = names.len().unwrap_or(0);
            let mut i = 0;
            while i + 1 < len {
                let key = names.get_array(i as i32).ctx("reading the name tree")?;
                let val = names.get_array(i as i32 + 1).ctx("reading the name tree")?;
                if let (Some(key), Some(val)) = (key, val) {
                    if let Some(k) = dest_key(&key) {
                        map.entry(k).or_insert(val);
                    }
                }
                i += 2;
            }
        }
    }
    if let Some(kids) = node.get_dict("Kids").ctx("reading the name tree")? {
        if kids.is_array().unwrap_or(false) {
            for kid in kids.array_iter().ctx("reading the name tree")? {
                collect_name_tree(&kid.ctx("reading the name tree")?, depth + 1, seen, map)?;
            }
        }
    }
    Ok(())
}

/// The destination of an outline item or annotation: `/Dest`, or `/D` of a `/GoTo`
/// action. Returns the owning dictionary and key so callers can replace it.
fn item_dest(item: &PdfObject) -> Result<Option<(PdfObject, &'static str, PdfObject)>> {
    if let Some(dest) = item.get_dict("Dest").ctx("reading a destination")? {
        return Ok(Some((item.try_clone().ctx("reading a destination")?, "Dest", dest)));
    }
    if let Some(action) = item.get_dict("A").ctx("reading an action")? {
        if let Some(s) = action.get_dict("S").ctx("reading an action")? {
            if is_name(&s, "GoTo") {
                if let Some(d) = action.get_dict("D").ctx("reading an action")? {
                    return Ok(Some((action, "D", d)));
                }
            }
        }
    }
    Ok(None)
}

/// Whether an item's destination leads to a page that is not kept.
fn points_to_removed(item: &PdfObject, dests: &NamedDests, kept: &HashSet<i32>) -> Result<bool> {
    Ok(match item_dest(item)? {
        Some((_, _, dest)) => matches!(dests.target_page(&dest), Some(num) if !kept.contains(&num)),
        None => false,
    })
}

/// Replaces a named destination of this item by the explicit array it names.
fn make_explicit(item: &PdfObject, dests: &NamedDests) -> Result<()> {
    if let Some((mut owner, key, dest)) = item_dest(item)? {
        if dest_key(&dest).is_some() {
            if let Some(array) = dests.explicit(&dest) {
                let copy = array.try_clone().ctx("copying a destination")?;
                owner.dict_put(key, copy).ctx("updating a destination")?;
            }
        }
    }
    Ok(())
}

fn annots_of(page: &PdfObject) -> Result<Option<PdfObject>> {
    let annots = page.get_dict("Annots").ctx("reading annotations")?;
    Ok(annots.filter(|a| a.is_array().unwrap_or(false)))
}

/// Walks the outline breadth-first-by-level, calling `visit` on every item; bounded
/// against cycles and runaway depth.
fn for_each_outline_item(doc: &PdfDocument, mut visit: impl FnMut(&PdfObject) -> Result<()>) -> Result<()> {
    let catalog = doc.catalog().ctx("reading the catalog")?;
    let Some(root) = catalog.get_dict("Outlines").ctx("reading the outline")? else {
        return Ok(());
    };
    let mut seen = HashSet::new();
    let mut stack = vec![(root.get_dict("First").ctx("reading the outline")?, 0usize)];
    let mut budget = MAX_ITEMS;
    while let Some((mut cur, depth)) = stack.pop() {
        while let Some(item) = cur {
            budget = budget.saturating_sub(1);
            let num = obj_num(&item);
            if budget == 0 || !item.is_dict().unwrap_or(false) || (num != 0 && !seen.insert(num)) {
                break;
            }
            visit(&item)?;
            if depth < MAX_DEPTH {
                stack.push((item.get_dict("First").ctx("reading the outline")?, depth + 1));
            }
            cur = item.get_dict("Next").ctx("reading the outline")?;
        }
    }
    Ok(())
}

/// Turns named destinations of links and outline items into explicit arrays, so they
/// keep working once the pages are grafted into a document without this name tree.
pub(crate) fn resolve_named_destinations(doc: &PdfDocument, pages: &[PdfObject]) -> Result<()> {
    let dests = NamedDests::load(doc)?;
    if dests.map.is_empty() {
        return Ok(());
    }
    for page in pages {
        if let Some(annots) = annots_of(page)? {
            for annot in annots.array_iter().ctx("reading annotations")? {
                let annot = annot.ctx("reading annotations")?;
                if annot.is_dict().unwrap_or(false) {
                    make_explicit(&annot, &dests)?;
                }
            }
        }
    }
    for_each_outline_item(doc, |item| make_explicit(item, &dests))
}

/// Removes references to pages that are no longer in the page tree. `kept` holds the
/// object numbers of the remaining pages.
pub(crate) fn prune_removed_pages(doc: &mut PdfDocument, pages: &[PdfObject], kept: &HashSet<i32>) -> Result<()> {
    prune_removed_pages_and_names(doc, pages, kept, HashSet::new())
}

/// As [`prune_removed_pages`]; destinations named in `gone` also count as leading to
/// a removed page.
pub(crate) fn prune_removed_pages_and_names(
    doc: &mut PdfDocument,
    pages: &[PdfObject],
    kept: &HashSet<i32>,
    gone: HashSet<Vec<u8>>,
) -> Result<()> {
    let mut dests = NamedDests::load(doc)?;
    dests.gone = gone;
    let mut catalog = doc.catalog().ctx("reading the catalog")?;

    let mut kept_annots = HashSet::new();
    for page in pages {
        let Some(mut annots) = annots_of(page)? else {
            continue;
        };
        let len = annots.len().unwrap_or(0);
        for i in (0..len).rev() {
            let Some(annot) = annots.get_array(i as i32).ctx("reading annotations")? else {
                continue;
            };
            let is_link = annot.get_dict("Subtype").ctx("reading annotations")?.is_some_and(|s| is_name(&s, "Link"));
            if is_link && points_to_removed(&annot, &dests, kept)? {
                annots.array_delete(i as i32).ctx("removing a link")?;
            } else {
                kept_annots.insert(obj_num(&annot));
            }
        }
    }

    if let Some(mut root) = catalog.get_dict("Outlines").ctx("reading the outline")? {
        let mut seen = HashSet::new();
        let mut budget = MAX_ITEMS;
        if strip_outline(&mut root, &dests, kept, 0, &mut seen, &mut budget)? == 0 {
            catalog.dict_delete("Outlines").ctx("removing the outline")?;
        }
    }

    prune_dest_tree(doc, &mut catalog, &dests, kept)?;

    if let Some(open) = catalog.get_dict("OpenAction").ctx("reading the catalog")? {
        // /OpenAction is a destination array or an action dictionary.
        let target = if open.is_array().unwrap_or(false) {
            dests.target_page(&open)
        } else if open.is_dict().unwrap_or(false) {
            let is_goto = open.get_dict("S").ctx("reading the catalog")?.is_some_and(|s| is_name(&s, "GoTo"));
            match open.get_dict("D").ctx("reading the catalog")? {
                Some(d) if is_goto => dests.target_page(&d),
                _ => None,
            }
        } else {
            None
        };
        if target.is_some_and(|num| !kept.contains(&num)) {
            catalog.dict_delete("OpenAction").ctx("removing the open action")?;
        }
    }

    if let Some(form) = catalog.get_dict("AcroForm").ctx("reading the form")? {
        if let Some(mut fields) = form.get_dict("Fields").ctx("reading the form")? {
            if fields.is_array().unwrap_or(false) {
                let mut seen = HashSet::new();
                prune_fields(&mut fields, &kept_annots, 0, &mut seen)?;
            }
        }
    }

    // The structure tree and page labels describe the old page sequence; a stale copy
    // would keep removed pages alive and mislabel the remaining ones.
    for key in ["StructTreeRoot", "MarkInfo", "PageLabels"] {
        catalog.dict_delete(key).ctx("updating the catalog")?;
    }
    Ok(())
}

/// Drops outline items whose destination was removed (items with surviving children
/// lose only their destination); relinks siblings. Returns the number of items kept at
/// this level.
fn strip_outline(
    parent: &mut PdfObject,
    dests: &NamedDests,
    kept: &HashSet<i32>,
    depth: usize,
    seen: &mut HashSet<i32>,
    budget: &mut usize,
) -> Result<usize> {
    let ctx = "pruning the outline";
    let mut items = Vec::new();
    let mut cur = parent.get_dict("First").ctx(ctx)?;
    while let Some(mut item) = cur {
        *budget = budget.saturating_sub(1);
        let num = obj_num(&item);
        if *budget == 0 || !item.is_dict().unwrap_or(false) || (num != 0 && !seen.insert(num)) {
            break;
        }
        cur = item.get_dict("Next").ctx(ctx)?;
        let children =
            if depth < MAX_DEPTH { strip_outline(&mut item, dests, kept, depth + 1, seen, budget)? } else { 0 };
        if points_to_removed(&item, dests, kept)? {
            if children == 0 {
                continue;
            }
            item.dict_delete("Dest").ctx(ctx)?;
            item.dict_delete("A").ctx(ctx)?;
        }
        items.push(item);
    }
    if items.is_empty() {
        for key in ["First", "Last", "Count"] {
            parent.dict_delete(key).ctx(ctx)?;
        }
        return Ok(0);
    }
    for i in 0..items.len() {
        let prev = if i > 0 { Some(items[i - 1].try_clone().ctx(ctx)?) } else { None };
        let next = items.get(i + 1).map(|n| n.try_clone()).transpose().ctx(ctx)?;
        let item = &mut items[i];
        match prev {
            Some(p) => item.dict_put("Prev", p).ctx(ctx)?,
            None => item.dict_delete("Prev").ctx(ctx)?,
        }
        match next {
            Some(n) => item.dict_put("Next", n).ctx(ctx)?,
            None => item.dict_delete("Next").ctx(ctx)?,
        }
    }
    let open = parent.get_dict("Count").ctx(ctx)?.map(|c| c.as_int().unwrap_or(0) >= 0).unwrap_or(true);
    let n = items.len() as i32;
    parent.dict_put("First", items[0].try_clone().ctx(ctx)?).ctx(ctx)?;
    parent.dict_put("Last", items[items.len() - 1].try_clone().ctx(ctx)?).ctx(ctx)?;
    parent.dict_put("Count", PdfObject::new_int(if open { n } else { -n }).ctx(ctx)?).ctx(ctx)?;
    Ok(items.len())
}

/// Rewrites the named-destination tree without entries for removed pages.
fn prune_dest_tree(doc: &PdfDocument, catalog: &mut PdfObject, dests: &NamedDests, kept: &HashSet<i32>) -> Result<()> {
    let ctx = "pruning named destinations";
    let keep = |v: &PdfObject| dests.target_page(v).is_none_or(|n| kept.contains(&n));

    if let Some(mut old) = catalog.get_dict("Dests").ctx(ctx)? {
        if old.is_dict().unwrap_or(false) {
            let mut doomed = Vec::new();
            for entry in old.dict_iter().ctx(ctx)? {
                let (k, v) = entry.ctx(ctx)?;
                if !keep(&v) {
                    doomed.push(k);
                }
            }
            for k in doomed {
                old.dict_delete(k).ctx(ctx)?;
            }
        }
    }

    let Some(mut names) = catalog.get_dict("Names").ctx(ctx)? else {
        return Ok(());
    };
    let Some(tree) = names.get_dict("Dests").ctx(ctx)? else {
        return Ok(());
    };
    let mut entries = HashMap::new();
    collect_name_tree(&tree, 0, &mut HashSet::new(), &mut entries)?;
    let mut kept_entries: Vec<(Vec<u8>, PdfObject)> = entries.into_iter().filter(|(_, v)| keep(v)).collect();
    kept_entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut flat = doc.new_array_with_capacity((kept_entries.len() * 2) as i32).ctx(ctx)?;
    for (k, v) in kept_entries {
        flat.array_push(new_byte_string(doc, &k)?).ctx(ctx)?;
        flat.array_push(v).ctx(ctx)?;
    }
    let mut node = doc.new_dict().ctx(ctx)?;
    node.dict_put("Names", flat).ctx(ctx)?;
    names.dict_put("Dests", node).ctx(ctx)?;
    Ok(())
}

/// A PDF string with arbitrary bytes (names in the tree need not be UTF-8).
pub(crate) fn new_byte_string(doc: &PdfDocument, bytes: &[u8]) -> Result<PdfObject> {
    // PdfObject::new_string takes &str; PDF literal syntax carries any bytes.
    let mut src = String::with_capacity(bytes.len() * 4 + 2);
    src.push('<');
    for b in bytes {
        src.push_str(&format!("{b:02X}"));
    }
    src.push('>');
    doc.new_object_from_str(&src).ctx("creating a string")
}

/// Removes form-field widgets that no longer sit on a kept page; drops fields left
/// without widgets. Returns whether `fields` (a `/Kids` or `/Fields` array) is empty.
fn prune_fields(
    fields: &mut PdfObject,
    kept_annots: &HashSet<i32>,
    depth: usize,
    seen: &mut HashSet<i32>,
) -> Result<bool> {
    let ctx = "pruning form fields";
    let len = fields.len().unwrap_or(0);
    for i in (0..len).rev() {
        let Some(field) = fields.get_array(i as i32).ctx(ctx)? else {
            continue;
        };
        let num = obj_num(&field);
        if num != 0 && !seen.insert(num) {
            continue;
        }
        let keep = match field.get_dict("Kids").ctx(ctx)? {
            Some(mut kids) if kids.is_array().unwrap_or(false) && depth < MAX_DEPTH => {
                !prune_fields(&mut kids, kept_annots, depth + 1, seen)?
            }
            _ => {
                let is_widget = field.get_dict("Subtype").ctx(ctx)?.is_some_and(|s| is_name(&s, "Widget"))
                    || field.get_dict("Rect").ctx(ctx)?.is_some();
                !is_widget || kept_annots.contains(&num)
            }
        };
        if !keep {
            fields.array_delete(i as i32).ctx(ctx)?;
        }
    }
    Ok(fields.len().unwrap_or(0) == 0)
}
