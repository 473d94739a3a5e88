//! Named destinations of the parts of a split: the input's destination trees are read
//! once, and each part gets only the entries that lead into it (or to no page at all),
//! instead of a copy of every entry that pruning then throws away (geotopo-117-pages.pdf
//! has 1,500 of them: copying and pruning them per page was a third of split's time).

use std::collections::{HashMap, HashSet};

use mupdf::pdf::{PdfDocument, PdfObject};

use crate::error::{MuPdfResultExt, Result};
use crate::pdf::graft::{dict_entries, Grafter};
use crate::pdf::links::{collect_name_tree, new_byte_string, NamedDests};

/// One destination: its name, its value, and the source page it leads to.
struct Entry {
    name: Vec<u8>,
    key: Option<PdfObject>,
    value: PdfObject,
    target: Option<i32>,
}

/// The input's `/Names /Dests` tree and catalog `/Dests` dictionary, resolved once.
pub(crate) struct SourceDests {
    tree: Option<Vec<Entry>>,
    dict: Option<Vec<Entry>>,
}

impl SourceDests {
    pub(crate) fn load(src: &PdfDocument) -> Result<Self> {
        let ctx = "reading destinations";
        let dests = NamedDests::load(src)?;
        let catalog = src.catalog().ctx(ctx)?;
        let tree =
            match catalog.get_dict("Names").ctx(ctx)?.map(|n| n.get_dict("Dests")).transpose().ctx(ctx)?.flatten() {
                Some(tree) => {
                    let mut map = HashMap::new();
                    collect_name_tree(&tree, 0, &mut HashSet::new(), &mut map)?;
                    let mut entries: Vec<Entry> = map
                        .into_iter()
                        .map(|(name, value)| Entry { target: dests.target_page(&value), name, key: None, value })
                        .collect();
                    entries.sort_by(|a, b| a.name.cmp(&b.name));
                    Some(entries)
                }
                None => None,
            };
        let dict = match catalog.get_dict("Dests").ctx(ctx)? {
            Some(d) if d.is_dict().unwrap_or(false) => Some(
                dict_entries(&d)?
                    .into_iter()
                    .map(|(key, value)| Entry {
                        name: key.as_name().unwrap_or_default(),
                        target: dests.target_page(&value),
                        key: Some(key),
                        value,
                    })
                    .collect(),
            ),
            _ => None,
        };
        Ok(SourceDests { tree, dict })
    }

    /// Puts `/Names` (its other trees copied as they are) and `/Dests` into the part's
    /// catalog with the destinations that do not lead to a page outside `kept` (source
    /// object numbers of the part's pages); returns the names left out.
    pub(crate) fn copy_into(
        &self,
        graft: &mut Grafter<'_>,
        src_catalog: &PdfObject,
        dst_catalog: &mut PdfObject,
        kept: &HashSet<i32>,
    ) -> Result<HashSet<Vec<u8>>> {
        let ctx = "copying destinations into a part";
        let keep = |e: &Entry| e.target.is_none_or(|n| kept.contains(&n));
        let mut gone = HashSet::new();
        if let Some(names) = src_catalog.get_dict("Names").ctx(ctx)? {
            if names.is_dict().unwrap_or(false) {
                let mut out = graft.dst().new_dict().ctx(ctx)?;
                for (key, value) in dict_entries(&names)? {
                    if key.as_name().unwrap_or_default() != b"Dests" {
                        let copy = graft.copy(&value, false)?;
                        out.dict_put(key, copy).ctx(ctx)?;
                    }
                }
                if let Some(entries) = &self.tree {
                    let mut flat = graft.dst().new_array().ctx(ctx)?;
                    for e in entries {
                        if keep(e) {
                            flat.array_push(new_byte_string(graft.dst(), &e.name)?).ctx(ctx)?;
                            flat.array_push(graft.copy(&e.value, false)?).ctx(ctx)?;
                        } else {
                            gone.insert(e.name.clone());
                        }
                    }
                    let mut node = graft.dst().new_dict().ctx(ctx)?;
                    node.dict_put("Names", flat).ctx(ctx)?;
                    out.dict_put("Dests", node).ctx(ctx)?;
                }
                dst_catalog.dict_put("Names", out).ctx(ctx)?;
            }
        }
        if let Some(entries) = &self.dict {
            let mut out = graft.dst().new_dict().ctx(ctx)?;
            for e in entries {
                if !keep(e) {
                    gone.insert(e.name.clone());
                } else if let Some(key) = &e.key {
                    let copy = graft.copy(&e.value, false)?;
                    out.dict_put(key.try_clone().ctx(ctx)?, copy).ctx(ctx)?;
                }
            }
            dst_catalog.dict_put("Dests", out).ctx(ctx)?;
        }
        Ok(gone)
    }
}
