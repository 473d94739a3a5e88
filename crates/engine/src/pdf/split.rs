//! Split: one PDF in, a ZIP of PDFs out.
//!
//! Entry names: `every_page` writes `page-0001.pdf`, `page-0002.pdf`, ... numbered by
//! the page (1-based); `ranges` and `chunks` write `part-0001.pdf`, `part-0002.pdf`, ...
//! numbered by the part in the order given. Numbers are zero-padded to 4 digits (more
//! digits past 9999). Entries are stored uncompressed: PDF streams are compressed
//! already.
//!
//! The input is parsed once. Each part is a new document into which the part's pages,
//! the catalog and what they reach are copied (streams raw, never decoded), so a part
//! costs what it contains, not what the whole document contains. A part keeps the
//! document's outline, links, named destinations and form fields that concern its
//! pages (same pruning as `delete_pages`); page labels and the structure tree are
//! dropped. Encrypted inputs (owner password only) are the exception: each part is cut
//! from a fresh parse so MuPDF's writer can keep the encryption.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use mupdf::pdf::{Encryption, PdfDocument, PdfObject};
use serde::{Deserialize, Serialize};

use crate::control::JobControl;
use crate::error::{EngineError, MuPdfResultExt, Result};
use crate::pdf::content::repair_page_contents;
use crate::pdf::graft::{dict_entries, Grafter};
use crate::pdf::links::prune_removed_pages_and_names;
use crate::pdf::object::obj_num;
use crate::pdf::open::{open_pdf, PasswordPolicy, Source};
use crate::pdf::pages::{keep_encryption, keep_pages};
use crate::pdf::part_dests::SourceDests;
use crate::pdf::save::{write_atomically, write_options};
use crate::pdf::tree::{flatten_inherited, install_page_tree};

/// Inputs up to this size are held in memory while splitting.
const IN_MEMORY_INPUT_CAP: u64 = 64 << 20;

/// Largest number of parts one split may produce.
pub const SPLIT_MAX_PARTS: usize = 10_000;

/// How to cut the document (the API's `mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SplitMode {
    /// One part per page.
    #[default]
    EveryPage,
    /// One part per range of [`SplitOptions::ranges`].
    Ranges,
    /// Consecutive parts of [`SplitOptions::chunk_size`] pages (the last one may be shorter).
    Chunks,
}

/// Options of [`split`], under the API's names.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitOptions {
    /// How to cut; default every page.
    #[serde(default)]
    pub mode: SplitMode,
    /// For `ranges`: `[start, end]` pairs, 1-based, inclusive, in the given order; ranges may
    /// overlap.
    pub ranges: Option<Vec<(i64, i64)>>,
    /// For `chunks`: pages per part.
    pub chunk_size: Option<i64>,
    /// Fail with `page_limit` when the input has more pages.
    pub max_pages: Option<u32>,
}

/// What [`split`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SplitResult {
    /// Number of PDFs in the ZIP.
    pub parts: u32,
    /// Pages written over all parts (a page in two overlapping ranges counts twice).
    pub pages_processed: u32,
    /// Size of the ZIP file.
    pub output_bytes: u64,
}

/// Page index lists (0-based) of each part, and whether names use `page-`.
fn plan(options: &SplitOptions, n: usize) -> Result<(Vec<Vec<usize>>, &'static str)> {
    match options.mode {
        SplitMode::EveryPage => Ok(((0..n).map(|i| vec![i]).collect(), "page")),
        SplitMode::Chunks => {
            let size =
                options.chunk_size.ok_or_else(|| EngineError::invalid_options("mode chunks needs chunk_size"))?;
            if size < 1 {
                return Err(EngineError::invalid_options(format!("chunk_size must be at least 1, not {size}")));
            }
            let size = size.min(n as i64) as usize;
            let parts = (0..n).collect::<Vec<_>>().chunks(size).map(<[usize]>::to_vec).collect();
            Ok((parts, "part"))
        }
        SplitMode::Ranges => {
            let ranges =
                options.ranges.as_deref().ok_or_else(|| EngineError::invalid_options("mode ranges needs ranges"))?;
            if ranges.is_empty() {
                return Err(EngineError::invalid_options("ranges must not be empty"));
            }
            let mut parts = Vec::with_capacity(ranges.len());
            for &(start, end) in ranges {
                if start < 1 || end < start || end > n as i64 {
                    return Err(EngineError::invalid_options(format!(
                        "range [{start}, {end}] is invalid: ranges are 1-based, inclusive, start <= end <= {n}"
                    )));
                }
                parts.push(((start - 1) as usize..end as usize).collect());
            }
            Ok((parts, "part"))
        }
    }
}

/// Splits `input` into a ZIP of PDFs at `output_zip`.
pub fn split(input: &Path, output_zip: &Path, options: &SplitOptions, control: &JobControl) -> Result<SplitResult> {
    control.checkpoint()?;
    let size = std::fs::metadata(input).map_err(|e| EngineError::io("reading the input", e))?.len();
    let bytes = if size <= IN_MEMORY_INPUT_CAP {
        Some(std::fs::read(input).map_err(|e| EngineError::io("reading the input", e))?)
    } else {
        None
    };
    let source = || match &bytes {
        Some(b) => Source::Bytes(b),
        None => Source::Path(input),
    };
    let mut opened = open_pdf(source(), PasswordPolicy::Refuse, options.max_pages)?;
    let n = opened.page_count();
    let (parts, prefix) = plan(options, n)?;
    if parts.len() > SPLIT_MAX_PARTS {
        return Err(EngineError::invalid_options(format!(
            "split would produce {} parts, more than the limit of {SPLIT_MAX_PARTS}",
            parts.len()
        )));
    }
    let pages_processed: usize = parts.iter().map(Vec::len).sum();
    control.start(pages_processed as u64)?;

    let output_bytes = if opened.encrypted {
        // An owner-password-only input: each part must stay encrypted the same way,
        // which only MuPDF's writer on the input document itself can do.
        drop(opened);
        write_zip(output_zip, &parts, prefix, control, |part| reparsed_part(source(), n, part, control))?
    } else {
        let pages = std::mem::take(&mut opened.pages);
        for page in &pages {
            // Parts get page dictionaries without /Parent: inherited attributes first
            // move onto the pages (in the parsed input only).
            flatten_inherited(&mut page.try_clone().ctx("reading a page")?)?;
        }
        let dests = SourceDests::load(&opened.doc)?;
        let mut checked = vec![false; n];
        write_zip(output_zip, &parts, prefix, control, |part| {
            // Content streams are checked (and repaired) once, the first time a page
            // is written; later parts copy the repaired stream.
            let fresh: Vec<usize> = part.iter().copied().filter(|&i| !checked[i]).collect();
            repair_page_contents(fresh.iter().map(|&i| (i + 1, &pages[i])), control)?;
            for _ in fresh.len()..part.len() {
                control.advance()?;
            }
            for &i in &fresh {
                checked[i] = true;
            }
            grafted_part(&opened.doc, &dests, &pages, part)
        })?
    };
    control.finish();
    Ok(SplitResult { parts: parts.len() as u32, pages_processed: pages_processed as u32, output_bytes })
}

/// Writes the ZIP: one stored entry per part, the part's bytes from `write_part`.
fn write_zip(
    output_zip: &Path,
    parts: &[Vec<usize>],
    prefix: &str,
    control: &JobControl,
    mut write_part: impl FnMut(&[usize]) -> Result<Vec<u8>>,
) -> Result<u64> {
    write_atomically(output_zip, control, |tmp| {
        let file = File::create(tmp).map_err(|e| EngineError::io("creating the output", e))?;
        let mut zip = zip::ZipWriter::new(BufWriter::new(file));
        let entry_options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored)
            .large_file(false);
        for (k, part) in parts.iter().enumerate() {
            let name = match prefix {
                "page" => format!("page-{:04}.pdf", part[0] + 1),
                _ => format!("part-{:04}.pdf", k + 1),
            };
            let bytes = write_part(part)?;
            zip.start_file(name, entry_options).map_err(|e| EngineError::io("writing the ZIP", e.into()))?;
            zip.write_all(&bytes).map_err(|e| EngineError::io("writing the ZIP", e))?;
        }
        let mut inner = zip.finish().map_err(|e| EngineError::io("finishing the ZIP", e.into()))?;
        inner.flush().map_err(|e| EngineError::io("writing the ZIP", e))?;
        Ok(())
    })
}

/// One part as a new document grafted from the parsed input: the part's pages (without
/// `/Parent`), the catalog and `/Info`, and what they reach. Every other page is
/// redirected to an empty placeholder, so references to it copy nothing and are then
/// pruned like `delete_pages` prunes them (outline items, links, named destinations,
/// `/OpenAction`, form fields); the structure tree and page labels are left out unless
/// the part is the whole document in order.
fn grafted_part(src: &PdfDocument, dests: &SourceDests, pages: &[PdfObject], part: &[usize]) -> Result<Vec<u8>> {
    let ctx = "building a part";
    let n = pages.len();
    let whole = part.len() == n && part.iter().enumerate().all(|(k, &i)| k == i);
    let mut dst = PdfDocument::new();
    let placeholder = dst.new_dict().ctx(ctx)?;
    let placeholder = dst.add_object(&placeholder).ctx(ctx)?;
    let mut graft = Grafter::new(src, &mut dst)?;
    let in_part: HashSet<usize> = part.iter().copied().collect();
    for (i, page) in pages.iter().enumerate() {
        if !in_part.contains(&i) && obj_num(page) != 0 {
            graft.redirect(obj_num(page), obj_num(&placeholder))?;
        }
    }
    // Targets of the part's pages exist before anything is copied, so references
    // between them (annotations' /P, links) resolve to the copies.
    let mut refs = Vec::with_capacity(part.len());
    for &i in part {
        refs.push(match obj_num(&pages[i]) {
            0 => graft.dst().create_object().ctx(ctx)?,
            num => graft.reserve(num)?,
        });
    }
    for (&i, target) in part.iter().zip(refs.iter_mut()) {
        let page = pages[i].resolve().ctx(ctx)?.unwrap_or_else(PdfObject::new_null);
        let copy = graft.copy(&page, true)?;
        target.write_object(&copy).ctx(ctx)?;
    }
    let src_catalog = src.catalog().ctx("reading the catalog")?;
    let mut catalog = graft.dst().catalog().ctx(ctx)?;
    let skip: &[&str] =
        if whole { &["Type", "Pages"] } else { &["Type", "Pages", "StructTreeRoot", "MarkInfo", "PageLabels"] };
    for (key, val) in dict_entries(&src_catalog)? {
        let name = key.as_name().unwrap_or_default();
        if skip.iter().any(|s| s.as_bytes() == name.as_slice()) || name == b"Names" || name == b"Dests" {
            continue;
        }
        let copy = graft.copy(&val, false)?;
        catalog.dict_put(key, copy).ctx(ctx)?;
    }
    let kept_src: HashSet<i32> = part.iter().map(|&i| obj_num(&pages[i])).collect();
    let gone = dests.copy_into(&mut graft, &src_catalog, &mut catalog, &kept_src)?;
    if let Some(info) = src.trailer().and_then(|t| t.get_dict("Info")).ctx(ctx)? {
        let copy = graft.copy(&info, false)?;
        let mut trailer = graft.dst().trailer().ctx(ctx)?;
        trailer.dict_put("Info", copy).ctx(ctx)?;
    }
    drop(graft);
    install_page_tree(&mut dst, &mut refs)?;
    if !whole {
        let nums: HashSet<i32> = refs.iter().map(obj_num).collect();
        prune_removed_pages_and_names(&mut dst, &refs, &nums, gone)?;
    }
    let mut bytes = Vec::new();
    dst.write_to_with_options(&mut bytes, write_options(Encryption::None)).ctx("writing a part")?;
    Ok(bytes)
}

/// One part from a fresh parse of the input reduced to its pages (page removal edits
/// the document in place, and MuPDF cannot copy a document); for encrypted inputs.
fn reparsed_part(source: Source<'_>, n: usize, part: &[usize], control: &JobControl) -> Result<Vec<u8>> {
    let mut opened = open_pdf(source, PasswordPolicy::Refuse, None)?;
    let encryption = keep_encryption(opened.encrypted);
    let pages = std::mem::take(&mut opened.pages);
    if pages.len() != n {
        return Err(EngineError::new(
            crate::error::ErrorCode::EngineError,
            "the page count changed between two reads of the input",
        ));
    }
    repair_page_contents(part.iter().map(|&i| (i + 1, &pages[i])), control)?;
    keep_pages(&mut opened.doc, &pages, part)?;
    let mut bytes = Vec::new();
    opened.doc.write_to_with_options(&mut bytes, write_options(encryption)).ctx("writing a part")?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(ranges: Vec<(i64, i64)>) -> SplitOptions {
        SplitOptions { mode: SplitMode::Ranges, ranges: Some(ranges), ..Default::default() }
    }

    #[test]
    fn chunks_cover_every_page_once_with_a_short_last_part() {
        let (parts, prefix) =
            plan(&SplitOptions { mode: SplitMode::Chunks, chunk_size: Some(3), ..Default::default() }, 7).unwrap();
        assert_eq!(parts, vec![vec![0, 1, 2], vec![3, 4, 5], vec![6]]);
        assert_eq!(prefix, "part");
    }

    #[test]
    fn ranges_are_one_based_inclusive_and_validated() {
        let (parts, _) = plan(&ranges(vec![(2, 3), (1, 1)]), 3).unwrap();
        assert_eq!(parts, vec![vec![1, 2], vec![0]]);
        for bad in [(0, 1), (2, 1), (1, 4)] {
            let err = plan(&ranges(vec![bad]), 3).unwrap_err();
            assert_eq!(err.code, crate::error::ErrorCode::InvalidOptions);
        }
    }
}
