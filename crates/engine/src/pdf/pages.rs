//! Page operations on one document: rotate, reorder, delete pages.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;

use mupdf::pdf::{Encryption, PdfDocument, PdfObject};
use serde::Deserialize;

use crate::control::JobControl;
use crate::error::{EngineError, MuPdfResultExt, Result};
use crate::pdf::content::repair_page_contents;
use crate::pdf::links::prune_removed_pages;
use crate::pdf::object::obj_num;
use crate::pdf::open::{open_pdf, PasswordPolicy, Source};
use crate::pdf::save::{save_pdf, write_options};
use crate::pdf::tree::{install_page_tree, page_rotation};
use crate::pdf::PageOpResult;

/// Options of [`rotate`], under the API's names (as are all the engine's options).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RotateOptions {
    /// Clockwise: 90, 180 or 270. Added to the page's existing `/Rotate`.
    pub degrees: i64,
    /// 0-based page indexes; `None` rotates every page. Duplicates count once.
    pub pages: Option<Vec<i64>>,
    /// Fail with `page_limit` when the input has more pages.
    pub max_pages: Option<u32>,
}

/// Options of [`reorder`].
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReorderOptions {
    /// New order as a full permutation of the 0-based page indexes: `order[k]` is the
    /// input page that becomes page `k`.
    pub order: Vec<i64>,
    /// Fail with `page_limit` when the input has more pages.
    pub max_pages: Option<u32>,
}

/// Options of [`delete_pages`].
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeletePagesOptions {
    /// 0-based indexes of the pages to remove; duplicates count once. Must leave at
    /// least one page.
    pub pages: Vec<i64>,
    /// Fail with `page_limit` when the input has more pages.
    pub max_pages: Option<u32>,
}

/// Output encryption for single-document edits: an owner-password-only input stays
/// encrypted the same way (its restrictions are not silently dropped; `unlock` does
/// that explicitly).
pub(crate) fn keep_encryption(encrypted: bool) -> Encryption {
    if encrypted {
        Encryption::Keep
    } else {
        Encryption::None
    }
}

/// Validates 0-based indexes against `page_count`; returns them sorted, deduplicated.
pub(crate) fn checked_indexes(indexes: &[i64], page_count: usize) -> Result<BTreeSet<usize>> {
    let mut set = BTreeSet::new();
    for &i in indexes {
        if i < 0 || i >= page_count as i64 {
            return Err(EngineError::invalid_options(format!(
                "page index {i} is out of range: the document has {page_count} pages (indexes 0..{})",
                page_count.saturating_sub(1)
            )));
        }
        set.insert(i as usize);
    }
    Ok(set)
}

/// The pages `pages` selects (0-based indexes, checked against `page_count`, sorted and
/// deduplicated): every page when it is absent or empty.
pub(crate) fn selected_or_all(pages: Option<&[i64]>, page_count: usize) -> Result<BTreeSet<usize>> {
    match pages {
        Some(p) if !p.is_empty() => checked_indexes(p, page_count),
        _ => Ok((0..page_count).collect()),
    }
}

/// Rotates pages clockwise by 90, 180 or 270 degrees, on top of their current rotation.
pub fn rotate(input: &Path, output: &Path, options: &RotateOptions, control: &JobControl) -> Result<PageOpResult> {
    let degrees = options.degrees;
    if !matches!(degrees, 90 | 180 | 270) {
        return Err(EngineError::invalid_options(format!("degrees must be 90, 180 or 270, not {degrees}")));
    }
    control.checkpoint()?;
    let opened = open_pdf(Source::Path(input), PasswordPolicy::Refuse, options.max_pages)?;
    let n = opened.page_count();
    let selected = match &options.pages {
        None => (0..n).collect(),
        Some(p) if p.is_empty() => return Err(EngineError::invalid_options("pages must not be empty")),
        Some(p) => checked_indexes(p, n)?,
    };
    control.start(n as u64)?;
    let pages = &opened.pages;
    repair_page_contents(pages.iter().enumerate().map(|(i, p)| (i + 1, p)), control)?;
    for i in selected {
        let mut page = pages[i].try_clone().ctx("reading a page")?;
        let rotation = (page_rotation(&page)? + degrees as i32) % 360;
        page.dict_put("Rotate", PdfObject::new_int(rotation).ctx("rotating a page")?).ctx("rotating a page")?;
    }
    finish_single(&opened.doc, output, opened.encrypted, n, n, control)
}

/// Puts the pages in a new order given as a full permutation.
pub fn reorder(input: &Path, output: &Path, options: &ReorderOptions, control: &JobControl) -> Result<PageOpResult> {
    control.checkpoint()?;
    let mut opened = open_pdf(Source::Path(input), PasswordPolicy::Refuse, options.max_pages)?;
    let n = opened.page_count();
    if options.order.len() != n {
        return Err(EngineError::invalid_options(format!(
            "order must list every page exactly once: the document has {n} pages, order has {} entries",
            options.order.len()
        )));
    }
    let distinct = checked_indexes(&options.order, n)?;
    if distinct.len() != n {
        return Err(EngineError::invalid_options("order must be a permutation: some page indexes repeat"));
    }
    control.start(n as u64)?;
    let pages = &opened.pages;
    repair_page_contents(pages.iter().enumerate().map(|(i, p)| (i + 1, p)), control)?;
    let mut ordered = options
        .order
        .iter()
        .map(|&i| pages[i as usize].try_clone())
        .collect::<std::result::Result<Vec<_>, _>>()
        .ctx("reordering pages")?;
    install_page_tree(&mut opened.doc, &mut ordered)?;
    // Labels are attached to page positions, which just changed.
    opened.doc.catalog().and_then(|mut c| c.dict_delete("PageLabels")).ctx("updating the catalog")?;
    finish_single(&opened.doc, output, opened.encrypted, n, n, control)
}

/// Removes pages. Outline entries, links, named destinations and form fields that
/// pointed at removed pages are dropped too.
pub fn delete_pages(
    input: &Path,
    output: &Path,
    options: &DeletePagesOptions,
    control: &JobControl,
) -> Result<PageOpResult> {
    control.checkpoint()?;
    let mut opened = open_pdf(Source::Path(input), PasswordPolicy::Refuse, options.max_pages)?;
    let n = opened.page_count();
    if options.pages.is_empty() {
        return Err(EngineError::invalid_options("pages must not be empty"));
    }
    let doomed = checked_indexes(&options.pages, n)?;
    if doomed.len() == n {
        return Err(EngineError::invalid_options("cannot delete every page: at least one page must remain"));
    }
    let keep: Vec<usize> = (0..n).filter(|i| !doomed.contains(i)).collect();
    control.start(keep.len() as u64)?;
    let pages = std::mem::take(&mut opened.pages);
    repair_page_contents(keep.iter().map(|&i| (i + 1, &pages[i])), control)?;
    keep_pages(&mut opened.doc, &pages, &keep)?;
    finish_single(&opened.doc, output, opened.encrypted, n, keep.len(), control)
}

/// Reduces the document to `keep` (indexes into `pages`, in that order) and prunes
/// references to the others.
pub(crate) fn keep_pages(doc: &mut PdfDocument, pages: &[PdfObject], keep: &[usize]) -> Result<()> {
    let mut kept = keep
        .iter()
        .map(|&i| pages[i].try_clone())
        .collect::<std::result::Result<Vec<_>, _>>()
        .ctx("selecting pages")?;
    install_page_tree(doc, &mut kept)?;
    if keep.len() < pages.len() {
        let nums: HashSet<i32> = kept.iter().map(obj_num).collect();
        // A reference to a removed page that survives pruning must not pull the old
        // page tree, and with it every page, into the output.
        for page in pages {
            if !nums.contains(&obj_num(page)) {
                let mut page = page.try_clone().ctx("selecting pages")?;
                page.dict_delete("Parent").ctx("selecting pages")?;
            }
        }
        prune_removed_pages(doc, &kept, &nums)?;
    }
    Ok(())
}

fn finish_single(
    doc: &PdfDocument,
    output: &Path,
    encrypted: bool,
    pages_processed: usize,
    page_count: usize,
    control: &JobControl,
) -> Result<PageOpResult> {
    control.checkpoint()?;
    let output_bytes = save_pdf(doc, output, write_options(keep_encryption(encrypted)), control)?;
    control.finish();
    Ok(PageOpResult { pages_processed: pages_processed as u32, page_count: page_count as u32, output_bytes })
}
