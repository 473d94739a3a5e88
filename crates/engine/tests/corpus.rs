//! Every PDF of the corpus through every operation. Each run must either produce an
//! output that passes `qpdf --check` (exit 0, or 3 = warnings) with the expected page
//! count, or fail with one of the documented error codes. Never a panic, never longer
//! than 60 s per operation. Each test prints a table of its results.
//!
//! Inputs that MuPDF opens without a password must succeed; user-password inputs must
//! fail with `encrypted_input` (and `unlock` must succeed with the manifest's password).

mod common;

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{corpus_dir, guarded, qpdf_check, qpdf_ok, qpdf_pages, Scratch};
use engine::{
    delete_pages, identify, merge, protect, reorder, rotate, split, unlock, DeletePagesOptions, ErrorCode, JobControl,
    Kind, ProtectOptions, ReorderOptions, RotateOptions, SplitOptions, UnlockOptions,
};

const TIMEOUT: Duration = Duration::from_secs(60);

struct CorpusPdf {
    name: String,
    path: PathBuf,
    manifest_pages: Option<u32>,
    password: Option<String>,
    /// The manifest says `qpdf --check` finds errors in the input itself.
    damaged: bool,
}

fn corpus_pdfs() -> Vec<CorpusPdf> {
    let dir = corpus_dir();
    let manifest = std::fs::read_to_string(dir.join("MANIFEST.tsv")).unwrap();
    let mut rows: HashMap<String, (Option<u32>, Option<String>, bool)> = HashMap::new();
    for line in manifest.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 8 {
            continue;
        }
        let password = cols[7]
            .split("password=")
            .nth(1)
            .map(|rest| rest.split([';', ')']).next().unwrap_or("").to_owned())
            .filter(|p| p != "unknown");
        let damaged = cols[7].contains("qpdf-check=errors");
        rows.insert(cols[0].to_owned(), (cols[3].parse().ok(), password, damaged));
    }
    let mut files: Vec<CorpusPdf> = std::fs::read_dir(dir.join("files"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "pdf"))
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let (manifest_pages, password, damaged) = rows.get(&name).cloned().unwrap_or((None, None, false));
            CorpusPdf { name, path, manifest_pages, password, damaged }
        })
        .collect();
    files.sort_by(|a, b| a.name.cmp(&b.name));
    files
}

/// What an operation is expected to leave behind.
enum Produced {
    /// A PDF with this many pages, opened with this password.
    Pdf(PathBuf, u32, Option<String>),
    /// A ZIP of single-page PDFs, this many entries.
    SplitZip(PathBuf, u32),
}

fn verify(produced: &Produced, scratch: &Scratch) -> Result<String, String> {
    match produced {
        Produced::Pdf(path, pages, password) => {
            let code = qpdf_check(path, password.as_deref());
            if !qpdf_ok(code) {
                return Err(format!("qpdf --check exit {code}"));
            }
            let n = qpdf_pages(path, password.as_deref());
            if n.is_some_and(|n| n != *pages) {
                return Err(format!("qpdf counts {n:?} pages, expected {pages}"));
            }
            Ok(format!("ok {pages}p qpdf={code}"))
        }
        Produced::SplitZip(path, parts) => {
            let mut zip = zip::ZipArchive::new(std::fs::File::open(path).map_err(|e| e.to_string())?)
                .map_err(|e| e.to_string())?;
            if zip.len() != *parts as usize {
                return Err(format!("zip has {} entries, expected {parts}", zip.len()));
            }
            // qpdf on every part of a 352-page book takes a while: check the ends.
            let picks: Vec<usize> = (0..zip.len()).filter(|&i| i < 3 || i + 3 >= zip.len()).collect();
            let mut worst = 0;
            for i in picks {
                let mut bytes = Vec::new();
                zip.by_index(i).unwrap().read_to_end(&mut bytes).unwrap();
                let p = scratch.path("part.pdf");
                std::fs::write(&p, &bytes).unwrap();
                let code = qpdf_check(&p, None);
                if !qpdf_ok(code) {
                    return Err(format!("part {i}: qpdf --check exit {code}"));
                }
                if qpdf_pages(&p, None).is_some_and(|n| n != 1) {
                    return Err(format!("part {i} is not one page"));
                }
                worst = worst.max(code);
            }
            Ok(format!("ok {parts} parts qpdf={worst}"))
        }
    }
}

/// Runs one operation over the whole corpus and asserts the rules.
fn run_corpus(
    op_name: &str,
    op: impl Fn(&CorpusPdf, &Path) -> Box<dyn FnOnce() -> Result<Produced, engine::EngineError> + Send>,
) {
    let files = corpus_pdfs();
    let scratch = Scratch::new(op_name);
    let mut failures = Vec::new();
    let mut table = vec![format!("{:<44} {:>7}  {}", format!("{op_name}: file"), "ms", "result")];
    for file in &files {
        let ident = identify(&file.path).unwrap();
        let opens = ident.kind == Kind::Pdf && ident.error.is_none();
        let locked = opens && ident.password_required;
        let work = scratch.0.join(&file.name);
        std::fs::create_dir_all(&work).unwrap();
        let started = Instant::now();
        let outcome = guarded(TIMEOUT, op(file, &work));
        let ms = started.elapsed().as_millis();
        let result = match outcome {
            Err(msg) => Err(msg),
            Ok(Ok(produced)) => verify(&produced, &scratch),
            Ok(Err(e)) => {
                let documented = ErrorCode::ALL.contains(&e.code);
                let expected = if !opens {
                    e.code == ErrorCode::InvalidPdf
                } else if locked && op_name != "unlock" {
                    e.code == ErrorCode::EncryptedInput
                } else if e.code == ErrorCode::InvalidPdf {
                    // Refusing is allowed only for inputs qpdf itself finds broken.
                    file.damaged
                } else {
                    op_name == "delete_pages" && e.code == ErrorCode::InvalidOptions && ident.page_count == Some(1)
                };
                if documented && expected {
                    Ok(format!("error {}", e.code))
                } else {
                    Err(format!("unexpected error {e}"))
                }
            }
        };
        // Success must not happen where the rules demand a refusal.
        let result = match result {
            Ok(s) if s.starts_with("ok") && locked && op_name != "unlock" => {
                Err("succeeded on a password-protected input".to_owned())
            }
            other => other,
        };
        let _ = std::fs::remove_dir_all(&work);
        match &result {
            Ok(s) => table.push(format!("{:<44} {ms:>7}  {s}", file.name)),
            Err(s) => {
                table.push(format!("{:<44} {ms:>7}  FAIL {s}", file.name));
                failures.push(format!("{}: {s}", file.name));
            }
        }
    }
    println!("{}", table.join("\n"));
    assert!(failures.is_empty(), "{op_name} failed on:\n{}", failures.join("\n"));
}

fn pages_of(file: &CorpusPdf) -> u32 {
    identify(&file.path).ok().and_then(|i| i.page_count).unwrap_or(0)
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn every_corpus_pdf_identifies_as_pdf_with_manifest_page_count_or_invalid_pdf() {
    let files = corpus_pdfs();
    let mut failures = Vec::new();
    println!("{:<44} {:>7}  result", "identify: file", "ms");
    for file in &files {
        let path = file.path.clone();
        let started = Instant::now();
        let r = guarded(TIMEOUT, move || identify(&path));
        let ms = started.elapsed().as_millis();
        let line = match r {
            Ok(Ok(id)) => {
                let ok = id.kind == Kind::Pdf
                    && match id.error {
                        Some(code) => code == ErrorCode::InvalidPdf && id.page_count.is_none(),
                        None => id.page_count.is_some_and(|n| n > 0),
                    };
                let mismatch =
                    id.error.is_none() && file.manifest_pages.is_some() && id.page_count != file.manifest_pages;
                let s = format!(
                    "{:?} pages={:?} (manifest {:?}) encrypted={} password_required={} error={:?}",
                    id.kind, id.page_count, file.manifest_pages, id.encrypted, id.password_required, id.error
                );
                if !ok {
                    failures.push(format!("{}: {s}", file.name));
                    format!("FAIL {s}")
                } else if mismatch {
                    format!("{s}  [page count differs from pdfinfo]")
                } else {
                    s
                }
            }
            Ok(Err(e)) => {
                failures.push(format!("{}: {e}", file.name));
                format!("FAIL {e}")
            }
            Err(msg) => {
                failures.push(format!("{}: {msg}", file.name));
                format!("FAIL {msg}")
            }
        };
        println!("{:<44} {ms:>7}  {line}", file.name);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn every_corpus_pdf_rotates_to_a_valid_pdf_or_a_documented_error() {
    run_corpus("rotate", |f, work| {
        let (input, out, n) = (f.path.clone(), work.join("out.pdf"), pages_of(f));
        Box::new(move || {
            let opts = RotateOptions { degrees: 90, pages: None, max_pages: None };
            rotate(&input, &out, &opts, &JobControl::new()).map(|_| Produced::Pdf(out, n, None))
        })
    });
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn every_corpus_pdf_reverses_to_a_valid_pdf_or_a_documented_error() {
    run_corpus("reorder", |f, work| {
        let (input, out, n) = (f.path.clone(), work.join("out.pdf"), pages_of(f));
        Box::new(move || {
            let order = (0..n as i64).rev().collect();
            reorder(&input, &out, &ReorderOptions { order, max_pages: None }, &JobControl::new())
                .map(|_| Produced::Pdf(out, n, None))
        })
    });
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn every_corpus_pdf_loses_its_first_page_or_refuses_to_delete_its_only_page() {
    run_corpus("delete_pages", |f, work| {
        let (input, out, n) = (f.path.clone(), work.join("out.pdf"), pages_of(f));
        Box::new(move || {
            let opts = DeletePagesOptions { pages: vec![0], max_pages: None };
            let r = delete_pages(&input, &out, &opts, &JobControl::new());
            // Deleting the only page must be refused.
            assert!(n != 1 || r.is_err(), "deleted the only page");
            r.map(|_| Produced::Pdf(out, n.saturating_sub(1), None))
        })
    });
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn every_corpus_pdf_splits_into_single_page_parts_or_a_documented_error() {
    run_corpus("split", |f, work| {
        let (input, out, n) = (f.path.clone(), work.join("out.zip"), pages_of(f));
        Box::new(move || {
            let opts = SplitOptions::default();
            split(&input, &out, &opts, &JobControl::new()).map(|r| {
                assert_eq!(r.parts, n);
                Produced::SplitZip(out, n)
            })
        })
    });
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn every_corpus_pdf_merges_with_itself_into_twice_the_pages_or_a_documented_error() {
    run_corpus("merge", |f, work| {
        let (input, out, n) = (f.path.clone(), work.join("out.pdf"), pages_of(f));
        Box::new(move || {
            merge(&[input.clone(), input], &out, &JobControl::new()).map(|_| Produced::Pdf(out, 2 * n, None))
        })
    });
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn every_corpus_pdf_protects_to_an_aes256_pdf_that_opens_with_the_password() {
    run_corpus("protect", |f, work| {
        let (input, out, n) = (f.path.clone(), work.join("out.pdf"), pages_of(f));
        Box::new(move || {
            let opts = ProtectOptions {
                user_password: Some("corpus-ü".into()),
                owner_password: Some("owner".into()),
                ..Default::default()
            };
            protect(&input, &out, &opts, &JobControl::new()).map(|_| Produced::Pdf(out, n, Some("corpus-ü".into())))
        })
    });
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn every_corpus_pdf_unlocks_with_its_manifest_password_or_none() {
    run_corpus("unlock", |f, work| {
        let (input, out, n) = (f.path.clone(), work.join("out.pdf"), pages_of(f));
        let password = f.password.clone();
        Box::new(move || {
            unlock(&input, &out, &UnlockOptions { password, max_pages: None }, &JobControl::new())
                .map(|_| Produced::Pdf(out, n, None))
        })
    });
}
