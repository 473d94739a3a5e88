//! Every corpus PDF through render (pages 1-3 at 72 dpi), redact (a box on page 1 at
//! 72 dpi) and compress (each level). Each run either produces a valid output (JPEG or
//! ZIP of JPEGs with one entry per page; PDFs that pass `qpdf --check` with exit 0 or 3,
//! keep their page count and open in `mutool`) or fails with a documented error code;
//! never a panic, never longer than 120 s. Prints a table of results.

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{corpus_dir, guarded, qpdf_check, qpdf_ok, qpdf_pages, Scratch};
use engine::pagework::compress::{compress, CompressLevel, CompressOptions};
use engine::pagework::redact::{redact, RedactOptions, RedactRegion};
use engine::pagework::render::{render_jpeg, RenderOptions};
use engine::{ErrorCode, JobControl};

const TIMEOUT: Duration = Duration::from_secs(120);

/// Codes an input may legitimately fail with (documented in docs/render.md).
fn documented(code: ErrorCode) -> bool {
    matches!(code, ErrorCode::InvalidPdf | ErrorCode::EncryptedInput | ErrorCode::PageTooLarge)
}

fn mutool_opens(path: &std::path::Path) -> bool {
    common::tool("mutool").args(["pages", path.to_str().unwrap()]).output().is_ok_and(|o| o.status.success())
}

fn check_pdf(out: &std::path::Path, pages: u32) -> Result<(), String> {
    let code = qpdf_check(out, None);
    if !qpdf_ok(code) {
        return Err(format!("qpdf --check exit {code}"));
    }
    if let Some(n) = qpdf_pages(out, None) {
        if n != pages {
            return Err(format!("{n} pages, expected {pages}"));
        }
    }
    if !mutool_opens(out) {
        return Err("mutool cannot open the output".into());
    }
    Ok(())
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn every_corpus_pdf_renders_redacts_and_compresses_or_fails_with_a_documented_code() {
    let dir = corpus_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("files"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pdf"))
        .collect();
    files.sort();
    let scratch = Scratch::new("pagework-corpus");
    let mut failures = Vec::new();
    for (n, input) in files.iter().enumerate() {
        let name = input.file_name().unwrap().to_string_lossy().into_owned();
        let ops: [&str; 5] = ["render", "redact", "light", "balanced", "strong"];
        for op in ops {
            let input = input.clone();
            let out = scratch.path(&format!("{n}-{op}.out"));
            let out2 = out.clone();
            let started = Instant::now();
            let result = guarded(TIMEOUT, move || -> Result<(u32, bool), engine::EngineError> {
                let c = JobControl::new();
                match op {
                    "render" => {
                        let o = RenderOptions { dpi: Some(72), pages: None, threads: Some(2), ..Default::default() };
                        // At most the first 3 pages: the corpus has 352-page books.
                        let count = engine::identify(&input).ok().and_then(|i| i.page_count).unwrap_or(1);
                        let o = RenderOptions { pages: Some((0..count.min(3) as i64).collect()), ..o };
                        render_jpeg(&input, &out2, &o, &c).map(|r| (r.pages_processed, r.zip))
                    }
                    "redact" => {
                        let o = RedactOptions {
                            regions: vec![RedactRegion { page: 0, x: 1.0, y: 1.0, w: 10.0, h: 10.0 }],
                            dpi: Some(72),
                            ..Default::default()
                        };
                        redact(&input, &out2, &o, &c).map(|r| (r.page_count, false))
                    }
                    level => {
                        let o = CompressOptions { level: CompressLevel::parse(level)?, ..Default::default() };
                        compress(&input, &out2, &o, &c).map(|r| (r.page_count, r.kept_original))
                    }
                }
            });
            let verdict = match result {
                Err(msg) => Err(msg),
                Ok(Err(e)) if documented(e.code) => Ok(format!("error {}", e.code)),
                Ok(Err(e)) => Err(format!("undocumented error {e}")),
                Ok(Ok((pages, zip))) => {
                    if op == "render" {
                        let bytes = std::fs::read(&out).unwrap();
                        if zip {
                            let z = zip::ZipArchive::new(std::fs::File::open(&out).unwrap()).map_err(|e| e.to_string());
                            match z {
                                Ok(z) if z.len() == pages as usize => Ok(format!("ok zip {pages}")),
                                Ok(z) => Err(format!("zip has {} entries, expected {pages}", z.len())),
                                Err(e) => Err(e),
                            }
                        } else if bytes.starts_with(&[0xff, 0xd8]) {
                            Ok("ok jpeg".into())
                        } else {
                            Err("not a JPEG".into())
                        }
                    } else if zip {
                        // compress kept the original: the output must be the input's bytes.
                        if std::fs::read(&out).unwrap() == std::fs::read(&files[n]).unwrap() {
                            Ok("ok kept original".into())
                        } else {
                            Err("kept_original but the bytes differ".into())
                        }
                    } else {
                        check_pdf(&out, pages).map(|()| format!("ok {pages}p"))
                    }
                }
            };
            let ms = started.elapsed().as_millis();
            match &verdict {
                Ok(v) => eprintln!("{name:50} {op:9} {v:28} {ms:>6} ms"),
                Err(v) => {
                    eprintln!("{name:50} {op:9} FAIL {v} {ms:>6} ms");
                    failures.push(format!("{name} {op}: {v}"));
                }
            }
            let _ = std::fs::remove_file(scratch.path(&format!("{n}-{op}.out")));
        }
    }
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
}
