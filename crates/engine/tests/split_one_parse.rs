//! Split writes every part from one parse of the input (src/pdf/split.rs): the parts
//! must carry each input page unchanged (content, boxes, rotation, text), hold no page
//! of another part, prune outline entries that lead out of the part, pass `qpdf
//! --check`, and an owner-password-only input still splits into encrypted parts.

mod common;

use std::path::Path;

use common::{corpus_file, qpdf_check, qpdf_ok, zip_entries, Scratch};
use engine::{split, JobControl, SplitMode, SplitOptions};
use mupdf::pdf::{PdfDocument, PdfObject};
use mupdf::TextPageFlags;

fn run(input: &Path, out: &Path, opts: SplitOptions) -> Vec<(String, Vec<u8>)> {
    split(input, out, &opts, &JobControl::new()).unwrap();
    zip_entries(out)
}

/// Decoded content of a page (its content streams concatenated).
fn content(page: &PdfObject) -> Vec<u8> {
    let Some(c) = page.get_dict("Contents").unwrap() else {
        return Vec::new();
    };
    if c.is_array().unwrap() {
        let mut all = Vec::new();
        for s in c.array_iter().unwrap() {
            all.extend(s.unwrap().read_stream().unwrap());
            all.push(b'\n');
        }
        all
    } else {
        c.read_stream().unwrap()
    }
}

fn boxes(page: &PdfObject) -> String {
    ["MediaBox", "CropBox", "Rotate"]
        .iter()
        .map(|k| page.get_dict_inheritable(*k).unwrap().map(|v| v.to_string()).unwrap_or_default())
        .collect::<Vec<_>>()
        .join(" ")
}

fn text(doc: &PdfDocument, i: i32) -> String {
    doc.load_page(i).unwrap().to_text_page(TextPageFlags::empty()).unwrap().to_text().unwrap()
}

/// Number of `/Type /Page` dictionaries anywhere in the file's object table.
fn page_objects(doc: &PdfDocument) -> usize {
    let mut n = 0;
    for num in 1..doc.xref_len().unwrap() {
        if let Ok(Some(obj)) = doc.xref_object(num as i32) {
            let is_page = obj.is_dict().unwrap_or(false)
                && obj.get_dict("Type").unwrap().is_some_and(|t| t.as_name().map(|n| n == b"Page").unwrap_or(false));
            n += usize::from(is_page);
        }
    }
    n
}

/// Checks one part against the input pages `first..first + count`.
fn check_part(scratch: &Scratch, name: &str, bytes: &[u8], input: &PdfDocument, first: i32, count: i32) {
    let p = scratch.path(name);
    std::fs::write(&p, bytes).unwrap();
    assert!(qpdf_ok(qpdf_check(&p, None)), "qpdf --check {name}");
    let part = PdfDocument::open(p.to_str().unwrap()).unwrap();
    assert_eq!(part.page_count().unwrap(), count, "{name} page count");
    assert_eq!(page_objects(&part), count as usize, "{name} holds page objects of other parts");
    for k in 0..count {
        let (a, b) = (input.find_page(first + k).unwrap(), part.find_page(k).unwrap());
        assert!(content(&a) == content(&b), "{name} page {} content differs", k + 1);
        assert_eq!(boxes(&a), boxes(&b), "{name} page {} boxes", k + 1);
        assert_eq!(text(input, first + k), text(&part, k), "{name} page {} text", k + 1);
    }
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn every_page_parts_carry_their_input_page_unchanged_and_no_other_page() {
    let scratch = Scratch::new("split-one-parse");
    for file in ["latex-outline-4-pages.pdf", "geotopo-117-pages.pdf", "acroform-printed-wikipedia.pdf"] {
        let input = corpus_file(file);
        let doc = PdfDocument::open(input.to_str().unwrap()).unwrap();
        let n = doc.page_count().unwrap();
        let entries = run(&input, &scratch.path("out.zip"), SplitOptions::default());
        assert_eq!(entries.len(), n as usize, "{file}");
        for (i, (name, bytes)) in entries.iter().enumerate() {
            assert_eq!(name, &format!("page-{:04}.pdf", i + 1));
            check_part(&scratch, &format!("{file}-{name}"), bytes, &doc, i as i32, 1);
        }
    }
}

#[test]
fn chunk_and_range_parts_carry_their_input_pages_in_order() {
    let scratch = Scratch::new("split-one-parse-chunks");
    let input = common::write(&scratch, "book.pdf", &common::synthetic_pdf(&[(612, 792, 0); 352], false));
    let doc = PdfDocument::open(input.to_str().unwrap()).unwrap();
    let entries = run(
        &input,
        &scratch.path("out.zip"),
        SplitOptions { mode: SplitMode::Chunks, chunk_size: Some(100), ..Default::default() },
    );
    assert_eq!(entries.len(), 4);
    for (k, (name, bytes)) in entries.iter().enumerate() {
        let first = 100 * k as i32;
        check_part(&scratch, name, bytes, &doc, first, (352 - first).min(100));
    }
    // Overlapping ranges, out of order: each part is cut from the same parse.
    let entries = run(
        &input,
        &scratch.path("out.zip"),
        SplitOptions { mode: SplitMode::Ranges, ranges: Some(vec![(300, 352), (1, 3), (2, 2)]), ..Default::default() },
    );
    check_part(&scratch, "r1", &entries[0].1, &doc, 299, 53);
    check_part(&scratch, "r2", &entries[1].1, &doc, 0, 3);
    check_part(&scratch, "r3", &entries[2].1, &doc, 1, 1);
}

#[test]
fn part_outline_keeps_only_entries_that_lead_into_the_part() {
    let scratch = Scratch::new("split-one-parse-outline");
    let input = common::write(&scratch, "outline.pdf", &common::synthetic_pdf(&[(612, 792, 0); 4], true));
    let whole = PdfDocument::open(input.to_str().unwrap()).unwrap();
    let total = count_items(&whole.outlines().unwrap());
    assert!(total > 1, "the input has an outline");
    let entries = run(&input, &scratch.path("out.zip"), SplitOptions::default());
    let mut kept = 0;
    for (name, bytes) in &entries {
        let p = scratch.path(name);
        std::fs::write(&p, bytes).unwrap();
        let part = PdfDocument::open(p.to_str().unwrap()).unwrap();
        kept += check_outline(&part.outlines().unwrap());
    }
    assert!(kept >= 1, "entries leading into a part survive");
    assert!(kept <= total);

    fn count_items(items: &[mupdf::Outline]) -> usize {
        items.iter().map(|o| 1 + count_items(&o.down)).sum()
    }
    // Every entry left leads to the part's only page (or nowhere, as a parent).
    fn check_outline(items: &[mupdf::Outline]) -> usize {
        items
            .iter()
            .map(|o| {
                if let Some(dest) = &o.dest {
                    assert_eq!(dest.loc.page_number, 0, "{} leads out of the part", o.title);
                }
                1 + check_outline(&o.down)
            })
            .sum()
    }
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn owner_password_only_input_splits_into_encrypted_parts() {
    let input = corpus_file("owner-password-aes-30-pages.pdf");
    let scratch = Scratch::new("split-one-parse-owner");
    let entries = run(
        &input,
        &scratch.path("out.zip"),
        SplitOptions { mode: SplitMode::Chunks, chunk_size: Some(10), ..Default::default() },
    );
    assert_eq!(entries.len(), 3);
    for (name, bytes) in &entries {
        let p = scratch.path(name);
        std::fs::write(&p, bytes).unwrap();
        let part = PdfDocument::open(p.to_str().unwrap()).unwrap();
        assert!(part.trailer().unwrap().get_dict("Encrypt").unwrap().is_some(), "{name} stays encrypted");
        assert_eq!(part.page_count().unwrap(), 10);
        assert!(qpdf_ok(qpdf_check(&p, None)), "qpdf --check {name}");
    }
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn part_links_and_named_destinations_lead_only_into_the_part() {
    // geotopo-117-pages.pdf links through ~1,500 named destinations.
    let input = corpus_file("geotopo-117-pages.pdf");
    let scratch = Scratch::new("split-one-parse-links");
    let whole = PdfDocument::open(input.to_str().unwrap()).unwrap();
    let internal = |doc: &PdfDocument, i: i32| {
        doc.load_page(i).unwrap().links().unwrap().filter(|l| l.uri.starts_with('#') || l.dest.is_some()).count()
    };
    let entries = run(
        &input,
        &scratch.path("out.zip"),
        SplitOptions { mode: SplitMode::Chunks, chunk_size: Some(20), ..Default::default() },
    );
    let (mut before, mut after) = (0, 0);
    for (k, (name, bytes)) in entries.iter().enumerate() {
        let p = scratch.path(name);
        std::fs::write(&p, bytes).unwrap();
        let part = PdfDocument::open(p.to_str().unwrap()).unwrap();
        let count = part.page_count().unwrap();
        for i in 0..count {
            before += internal(&whole, 20 * k as i32 + i);
            for link in part.load_page(i).unwrap().links().unwrap() {
                // A link to a destination name the part no longer has would be left
                // without a destination.
                assert!(
                    link.dest.is_some() || !link.uri.starts_with('#'),
                    "{name} page {}: a link to a missing destination ({})",
                    i + 1,
                    link.uri
                );
                if let Some(dest) = link.dest {
                    after += 1;
                    assert!(
                        (dest.loc.page_number as i32) < count,
                        "{name} page {}: a link leads out of the part ({})",
                        i + 1,
                        link.uri
                    );
                }
            }
        }
    }
    assert!(before > 0 && after > 0, "links within parts survive ({after} of {before})");
    assert!(after < before, "links to other parts are removed");
}
