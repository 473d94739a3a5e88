//! Each PDF operation on small PDFs built here (common::synthetic_pdf: pages of known size,
//! /Rotate and bookmarks), checking real properties of the output (page count, /Rotate,
//! order, outlines) by reopening it with MuPDF and qpdf. Encryption (protect, unlock,
//! encrypted inputs) is in page_ops_security.rs; every corpus PDF goes through these
//! operations in corpus.rs.

mod common;

use std::path::{Path, PathBuf};

use common::{assert_valid, open, qpdf_check, qpdf_ok, synthetic_pdf, write, zip_entries, Scratch};
use engine::{
    delete_pages, merge, reorder, rotate, split, DeletePagesOptions, ErrorCode, JobControl, ReorderOptions,
    RotateOptions, SplitMode, SplitOptions,
};
use mupdf::pdf::PdfDocument;

fn rotation(doc: &PdfDocument, i: i32) -> i32 {
    doc.find_page(i).unwrap().get_dict_inheritable("Rotate").unwrap().map(|r| r.as_int().unwrap()).unwrap_or(0)
}

fn page_sizes(doc: &PdfDocument) -> Vec<(i32, i32)> {
    (0..doc.page_count().unwrap())
        .map(|i| {
            let b = doc.load_page(i).unwrap().bounds().unwrap();
            ((b.x1 - b.x0).round() as i32, (b.y1 - b.y0).round() as i32)
        })
        .collect()
}

/// Four pages, three of them already turned (/Rotate 90, 180, 270).
fn rotated_pages(s: &Scratch) -> PathBuf {
    write(s, "rotated.pdf", &synthetic_pdf(&[(612, 792, 90), (612, 792, 0), (612, 792, 180), (595, 842, 270)], false))
}

/// Three pages of three different sizes.
fn mixed_sizes(s: &Scratch) -> PathBuf {
    write(s, "mixed.pdf", &synthetic_pdf(&[(612, 792, 0), (595, 842, 0), (300, 420, 0)], false))
}

/// Four pages with one bookmark each.
fn outlined(s: &Scratch) -> PathBuf {
    write(s, "outline.pdf", &synthetic_pdf(&[(612, 792, 0); 4], true))
}

fn ctl() -> JobControl {
    JobControl::new()
}

#[test]
fn rotate_adds_clockwise_degrees_to_existing_rotate_on_selected_pages() {
    let inputs = Scratch::new("inputs");
    let input = rotated_pages(&inputs);
    let scratch = Scratch::new("rotate");
    let out = scratch.path("out.pdf");
    let before: Vec<i32> = {
        let d = open(&input);
        (0..4).map(|i| rotation(&d, i)).collect()
    };
    let opts = RotateOptions { degrees: 90, pages: Some(vec![0, 2, 2]), max_pages: None };
    let r = rotate(&input, &out, &opts, &ctl()).unwrap();
    assert_eq!((r.pages_processed, r.page_count), (4, 4));
    assert_eq!(r.output_bytes, std::fs::metadata(&out).unwrap().len());
    let d = open(&out);
    for (i, &was) in before.iter().enumerate() {
        let expected = if i == 0 || i == 2 { (was + 90) % 360 } else { was };
        assert_eq!(rotation(&d, i as i32), expected, "page {i}");
    }
    assert_valid(&out, 4, None);

    let all = RotateOptions { degrees: 270, pages: None, max_pages: None };
    rotate(&input, &out, &all, &ctl()).unwrap();
    let d = open(&out);
    for (i, &was) in before.iter().enumerate() {
        assert_eq!(rotation(&d, i as i32), (was + 270) % 360);
    }
}

#[test]
fn rotate_rejects_other_angles_and_out_of_range_pages() {
    let inputs = Scratch::new("inputs");
    let input = rotated_pages(&inputs);
    let scratch = Scratch::new("rotate-bad");
    let out = scratch.path("out.pdf");
    for opts in [
        RotateOptions { degrees: 45, pages: None, max_pages: None },
        RotateOptions { degrees: 90, pages: Some(vec![4]), max_pages: None },
        RotateOptions { degrees: 90, pages: Some(vec![-1]), max_pages: None },
        RotateOptions { degrees: 90, pages: Some(vec![]), max_pages: None },
    ] {
        let err = rotate(&input, &out, &opts, &ctl()).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidOptions, "{opts:?}");
        assert!(!out.exists());
    }
}

#[test]
fn reorder_applies_the_permutation() {
    let inputs = Scratch::new("inputs");
    let input = mixed_sizes(&inputs);
    let scratch = Scratch::new("reorder");
    let out = scratch.path("out.pdf");
    let sizes = page_sizes(&open(&input));
    assert_ne!(sizes[0], sizes[2], "fixture should have mixed page sizes");
    let r = reorder(&input, &out, &ReorderOptions { order: vec![2, 0, 1], max_pages: None }, &ctl()).unwrap();
    assert_eq!(r.page_count, 3);
    assert_eq!(page_sizes(&open(&out)), vec![sizes[2], sizes[0], sizes[1]]);
    assert_valid(&out, 3, None);
}

#[test]
fn reorder_requires_a_full_permutation() {
    let inputs = Scratch::new("inputs");
    let input = mixed_sizes(&inputs);
    let scratch = Scratch::new("reorder-bad");
    let out = scratch.path("out.pdf");
    for order in [vec![0, 1], vec![0, 1, 1], vec![0, 1, 3], vec![0, 1, 2, 0]] {
        let err = reorder(&input, &out, &ReorderOptions { order: order.clone(), max_pages: None }, &ctl()).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidOptions, "{order:?}");
    }
    assert!(!out.exists());
}

#[test]
fn delete_pages_removes_pages_and_outline_entries_pointing_at_them() {
    let inputs = Scratch::new("inputs");
    let input = outlined(&inputs);
    let scratch = Scratch::new("delete");
    let out = scratch.path("out.pdf");
    let before = open(&input).outlines().unwrap();
    let r = delete_pages(&input, &out, &DeletePagesOptions { pages: vec![1, 2], max_pages: None }, &ctl()).unwrap();
    assert_eq!((r.pages_processed, r.page_count), (4, 2));
    let d = open(&out);
    assert_eq!(d.page_count().unwrap(), 2);
    // Every surviving outline entry must lead to a page that still exists.
    fn check(items: &[mupdf::Outline], pages: i32) -> usize {
        let mut n = 0;
        for o in items {
            if let Some(dest) = &o.dest {
                assert!((dest.loc.page_number as i32) < pages, "{:?}", o.title);
            }
            n += 1 + check(&o.down, pages);
        }
        n
    }
    let total_before = check(&before, 4);
    let total_after = check(&d.outlines().unwrap(), 2);
    assert!(total_after < total_before, "outline entries for deleted pages are gone");
    assert_valid(&out, 2, None);
}

#[test]
fn delete_pages_refuses_to_delete_every_page_or_out_of_range() {
    let inputs = Scratch::new("inputs");
    let input = mixed_sizes(&inputs);
    let scratch = Scratch::new("delete-bad");
    let out = scratch.path("out.pdf");
    for pages in [vec![0, 1, 2], vec![3], vec![]] {
        let err = delete_pages(&input, &out, &DeletePagesOptions { pages, max_pages: None }, &ctl()).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidOptions);
    }
    assert!(!out.exists());
}

#[test]
fn merge_concatenates_in_order_and_keeps_outlines() {
    let inputs = Scratch::new("inputs");
    let (a, b) = (outlined(&inputs), mixed_sizes(&inputs));
    let scratch = Scratch::new("merge");
    let out = scratch.path("out.pdf");
    let r = merge(&[b.clone(), a.clone(), a.clone()], &out, &ctl()).unwrap();
    assert_eq!((r.pages_processed, r.page_count), (11, 11));
    let d = open(&out);
    let sizes = page_sizes(&d);
    assert_eq!(&sizes[0..3], &page_sizes(&open(&b))[..]);
    assert_eq!(&sizes[3..7], &page_sizes(&open(&a))[..]);
    // Both copies of the LaTeX outline are appended, pointing into their own pages.
    let outline = d.outlines().unwrap();
    let per_copy = open(&a).outlines().unwrap().len();
    assert_eq!(outline.len(), 2 * per_copy);
    let first_pages: Vec<u32> = outline.iter().filter_map(|o| o.dest.map(|d| d.loc.page_number)).collect();
    assert!(first_pages[0] >= 3 && first_pages[0] < 7, "{first_pages:?}");
    assert!(first_pages[per_copy] >= 7, "{first_pages:?}");
    assert_valid(&out, 11, None);
}

#[test]
fn merge_takes_two_to_fifty_inputs() {
    let inputs = Scratch::new("inputs");
    let a = mixed_sizes(&inputs);
    let scratch = Scratch::new("merge-bad");
    let out = scratch.path("out.pdf");
    let err = merge(std::slice::from_ref(&a), &out, &ctl()).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidOptions);
    let err = merge(&vec![a.clone(); 51], &out, &ctl()).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidOptions);
    assert!(!out.exists());
}

fn part_pages(scratch: &Scratch, bytes: &[u8]) -> u32 {
    let p = scratch.path("part.pdf");
    std::fs::write(&p, bytes).unwrap();
    assert!(qpdf_ok(qpdf_check(&p, None)));
    open(&p).page_count().unwrap() as u32
}

#[test]
fn split_writes_named_parts_for_each_mode() {
    let inputs = Scratch::new("inputs");
    let input = mixed_sizes(&inputs);
    let scratch = Scratch::new("split");
    let out = scratch.path("out.zip");

    let r = split(&input, &out, &SplitOptions::default(), &ctl()).unwrap();
    assert_eq!((r.parts, r.pages_processed), (3, 3));
    let entries = zip_entries(&out);
    let names: Vec<&str> = entries.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(names, ["page-0001.pdf", "page-0002.pdf", "page-0003.pdf"]);
    for (_, bytes) in &entries {
        assert_eq!(part_pages(&scratch, bytes), 1);
    }

    split(&input, &out, &SplitOptions { mode: SplitMode::Chunks, chunk_size: Some(2), ..Default::default() }, &ctl())
        .unwrap();
    let entries = zip_entries(&out);
    assert_eq!(entries.iter().map(|e| e.0.as_str()).collect::<Vec<_>>(), ["part-0001.pdf", "part-0002.pdf"]);
    assert_eq!(part_pages(&scratch, &entries[0].1), 2);
    assert_eq!(part_pages(&scratch, &entries[1].1), 1);

    let r = split(
        &input,
        &out,
        &SplitOptions { mode: SplitMode::Ranges, ranges: Some(vec![(3, 3), (1, 2)]), ..Default::default() },
        &ctl(),
    )
    .unwrap();
    assert_eq!((r.parts, r.pages_processed), (2, 3));
    let entries = zip_entries(&out);
    assert_eq!(part_pages(&scratch, &entries[0].1), 1);
    assert_eq!(part_pages(&scratch, &entries[1].1), 2);

    let err = split(
        &input,
        &out,
        &SplitOptions { mode: SplitMode::Chunks, chunk_size: Some(0), ..Default::default() },
        &ctl(),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidOptions);
}

#[test]
fn unreadable_input_is_invalid_pdf() {
    let inputs = Scratch::new("inputs");
    let input = write(&inputs, "header-only.pdf", b"%PDF-1.3\nThis is not a valid PDF file\n%%EOF\n");
    let scratch = Scratch::new("invalid");
    let out = scratch.path("out.pdf");
    let err = rotate(&input, &out, &RotateOptions { degrees: 90, pages: None, max_pages: None }, &ctl()).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidPdf);
    let not_pdf = write(&inputs, "not.pdf", b"PK\x03\x04 a ZIP archive, not a PDF");
    let err = rotate(&not_pdf, &out, &RotateOptions { degrees: 90, pages: None, max_pages: None }, &ctl()).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidPdf);
    let err = rotate(
        Path::new("/nonexistent.pdf"),
        &out,
        &RotateOptions { degrees: 90, pages: None, max_pages: None },
        &ctl(),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::IoError);
}

#[test]
fn max_pages_cap_gives_page_limit() {
    let inputs = Scratch::new("inputs");
    let input = outlined(&inputs);
    let scratch = Scratch::new("page-limit");
    let out = scratch.path("out.pdf");
    let err =
        rotate(&input, &out, &RotateOptions { degrees: 90, pages: None, max_pages: Some(3) }, &ctl()).unwrap_err();
    assert_eq!(err.code, ErrorCode::PageLimit);
}

#[test]
fn cancelled_before_start_fails_with_cancelled_and_leaves_no_output() {
    let inputs = Scratch::new("inputs");
    let input = outlined(&inputs);
    let scratch = Scratch::new("cancel");
    let out = scratch.path("out.pdf");
    let control = JobControl::new();
    control.cancel();
    let err = rotate(&input, &out, &RotateOptions { degrees: 90, pages: None, max_pages: None }, &control).unwrap_err();
    assert_eq!(err.code, ErrorCode::Cancelled);
    let zip = scratch.path("out.zip");
    let err = split(&input, &zip, &SplitOptions::default(), &control).unwrap_err();
    assert_eq!(err.code, ErrorCode::Cancelled);
    assert!(!out.exists() && !zip.exists());
    assert_eq!(std::fs::read_dir(&scratch.0).unwrap().count(), 0, "no temporary files left");
}

#[test]
fn cancelling_mid_split_stops_at_a_page_checkpoint() {
    let inputs = Scratch::new("inputs");
    let input = write(&inputs, "book.pdf", &synthetic_pdf(&[(612, 792, 0); 352], false));
    let scratch = Scratch::new("cancel-mid");
    let out: PathBuf = scratch.path("out.zip");
    let control = std::sync::Arc::new(JobControl::new());
    let c2 = control.clone();
    let canceller = std::thread::spawn(move || {
        while c2.progress().done < 3 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        c2.cancel();
    });
    let err = split(&input, &out, &SplitOptions::default(), &control).unwrap_err();
    canceller.join().unwrap();
    assert_eq!(err.code, ErrorCode::Cancelled);
    let p = control.progress();
    assert!(p.done < p.total, "stopped early: {p:?}");
    assert_eq!(std::fs::read_dir(&scratch.0).unwrap().count(), 0);
}

#[test]
fn progress_reaches_total_on_success() {
    let inputs = Scratch::new("inputs");
    let input = outlined(&inputs);
    let scratch = Scratch::new("progress");
    let control = JobControl::new();
    reorder(&input, &scratch.path("o.pdf"), &ReorderOptions { order: vec![3, 2, 1, 0], max_pages: None }, &control)
        .unwrap();
    let p = control.progress();
    assert_eq!((p.done, p.total), (4, 4));
}
