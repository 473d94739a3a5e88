//! Helpers shared by the integration tests: the corpus location, scratch directories
//! and the external `qpdf` checker.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// The repository root (where `node_modules/` and `models/` are).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The corpus directory: the one build.rs looked in (../test_inputs.rs: `CORPUS_DIR`, else
/// `<repo>/.corpus`, else `shared/corpus` beside the repository). The tests that read it are
/// `#[ignore]`d when the build did not find it (cfg `has_corpus`).
pub fn corpus_location() -> PathBuf {
    PathBuf::from(env!("DOCPROC_CORPUS_DIR"))
}

/// A path inside the corpus (`files/...` or `ocr/...`), for tests that require it.
pub fn corpus_path(relative: &str) -> PathBuf {
    corpus_location().join(relative)
}

/// Initialises the engine's OCR from the installed npm packages, as the worker does.
pub fn init_ocr() {
    let r = repo_root();
    engine::ocr::pipeline::ocr_init(&engine::ocr::pipeline::OcrInit {
        ort_library: r.join("node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"),
        manifest: r.join("models/manifest.json"),
        model_root: r.join("node_modules"),
        intra_threads: 2,
        det_max_side: None,
        machine_lock: None,
        tuning: Default::default(),
        tessdata: std::env::var_os("TESSDATA_PREFIX").map(Into::into),
    })
    .unwrap();
}

/// The corpus directory, for a test that runs only `#[cfg(has_corpus)]`.
pub fn corpus_dir() -> PathBuf {
    let dir = corpus_location();
    assert!(dir.join("files").is_dir(), "corpus missing at {} (the build found it: rebuild)", dir.display());
    dir
}

/// A corpus file by name, for a test that runs only `#[cfg(has_corpus)]`.
pub fn corpus_file(name: &str) -> PathBuf {
    let path = corpus_dir().join("files").join(name);
    assert!(path.is_file(), "corpus file {} missing", path.display());
    path
}

/// A command for the reference tool `name`; panics, naming the tool, when it is not on
/// PATH, so that a check that needs it fails instead of passing unchecked.
pub fn tool(name: &str) -> Command {
    let found =
        std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()));
    assert!(found, "{name} is not installed (scripts/setup.sh installs it): this test checks with it");
    Command::new(name)
}

/// A fresh scratch directory, removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(label: &str) -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "engine-test-{}-{}-{label}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `qpdf --check` exit code: 0 ok, 3 warnings, 2 errors. Panics without qpdf.
pub fn qpdf_check(path: &Path, password: Option<&str>) -> i32 {
    let mut cmd = tool("qpdf");
    if let Some(p) = password {
        cmd.arg(format!("--password={p}"));
    }
    let out = cmd.arg("--check").arg(path).output().expect("qpdf runs");
    out.status.code().unwrap_or(-1)
}

/// Page count according to qpdf, `None` when qpdf cannot count them. Panics without qpdf.
pub fn qpdf_pages(path: &Path, password: Option<&str>) -> Option<u32> {
    let mut cmd = tool("qpdf");
    if let Some(p) = password {
        cmd.arg(format!("--password={p}"));
    }
    let out = cmd.arg("--show-npages").arg(path).output().expect("qpdf runs");
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// Whether a `qpdf --check` exit code is acceptable for our outputs (0 or 3).
pub fn qpdf_ok(code: i32) -> bool {
    matches!(code, 0 | 3)
}

/// Runs `op` on its own thread (16 MiB stack) with a time limit; a panic or a timeout
/// becomes a message, so a whole-corpus test reports every file instead of stopping.
pub fn guarded<T: Send + 'static>(
    timeout: Duration,
    op: impl FnOnce() -> Result<T, engine::EngineError> + Send + 'static,
) -> Result<Result<T, engine::EngineError>, String> {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::Builder::new()
        .stack_size(16 << 20)
        .spawn(move || {
            let _ = tx.send(op());
        })
        .unwrap();
    match rx.recv_timeout(timeout) {
        Ok(r) => {
            let _ = handle.join();
            Ok(r)
        }
        Err(mpsc::RecvTimeoutError::Timeout) => Err(format!("TIMEOUT > {}s", timeout.as_secs())),
        Err(mpsc::RecvTimeoutError::Disconnected) => Err("PANIC".to_owned()),
    }
}

/// Opens a PDF with MuPDF (panics on failure).
pub fn open(path: &Path) -> mupdf::pdf::PdfDocument {
    mupdf::pdf::PdfDocument::open(path.to_str().unwrap()).unwrap()
}

/// `qpdf --check` passes and qpdf counts `pages` pages.
pub fn assert_valid(path: &Path, pages: u32, password: Option<&str>) {
    let code = qpdf_check(path, password);
    assert!(qpdf_ok(code), "qpdf --check {} exited {code}", path.display());
    assert_eq!(qpdf_pages(path, password), Some(pages), "qpdf page count of {}", path.display());
}

/// Every entry of a ZIP (a split or render result): name and bytes, in archive order.
pub fn zip_entries(path: &Path) -> Vec<(String, Vec<u8>)> {
    use std::io::Read;
    let mut zip = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    (0..zip.len())
        .map(|i| {
            let mut f = zip.by_index(i).unwrap();
            let mut bytes = Vec::new();
            f.read_to_end(&mut bytes).unwrap();
            (f.name().unwrap().into_owned(), bytes)
        })
        .collect()
}

/// A stream object's body: `<< dict /Length n >>` and `data`.
pub fn stream(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut v = format!("<< {dict} /Length {} >>\nstream\n", data.len()).into_bytes();
    v.extend_from_slice(data);
    v.extend_from_slice(b"\nendstream");
    v
}

/// Compresses `input` to `output` at `level` (default options); the output's size.
pub fn compress_at(input: &Path, output: &Path, level: engine::pagework::compress::CompressLevel) -> u64 {
    use engine::pagework::compress::{compress, CompressOptions};
    compress(input, output, &CompressOptions { level, ..Default::default() }, &engine::JobControl::new())
        .unwrap_or_else(|e| panic!("{}: {e:?}", input.display()))
        .output_bytes
}

/// The grey pixels of every page of `path` at `dpi` (annotations drawn).
pub fn grey_pixels(path: &Path, dpi: f32) -> Vec<Vec<u8>> {
    use mupdf::{Colorspace, Document, Matrix};
    let doc = Document::open(path.to_str().unwrap()).unwrap();
    let m = Matrix::new_scale(dpi / 72.0, dpi / 72.0);
    (0..doc.page_count().unwrap())
        .map(|i| {
            let page = doc.load_page(i).unwrap();
            page.to_pixmap(&m, &Colorspace::device_gray(), false, true).unwrap().samples().to_vec()
        })
        .collect()
}

/// The grey pixels of page 1 of `path` at `dpi`, drawn by poppler's `pdftoppm` in a process of
/// its own: a renderer other than the MuPDF that wrote the file, with a resource store of its
/// own. (The mupdf crate's contexts share one store per process, and MuPDF's store finds a colour
/// space written inline, a direct array, by comparing the array's contents, where a reference
/// inside compares by object number alone, not by document: two documents open at once whose
/// inline arrays read alike share one colour space, tint transform included.)
pub fn poppler_grey(path: &Path, dpi: u32) -> Vec<u8> {
    let stem = path.with_extension(format!("{dpi}dpi"));
    let ok = tool("pdftoppm")
        .args(["-gray", "-r", &dpi.to_string(), "-f", "1", "-l", "1", "-singlefile"])
        .args([path, &stem])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "pdftoppm {}", path.display());
    let pgm = std::fs::read(stem.with_extension(format!("{dpi}dpi.pgm"))).unwrap();
    // P5, width, height, maxval, then one whitespace byte before the samples.
    let mut fields = 0;
    let mut at = 0;
    while fields < 4 {
        while pgm[at].is_ascii_whitespace() {
            at += 1;
        }
        while !pgm[at].is_ascii_whitespace() {
            at += 1;
        }
        fields += 1;
    }
    pgm[at + 1..].to_vec()
}

/// A PDF from object bodies (object i + 1 = `objects[i]`); object 1 must be the catalog.
pub fn build_pdf(objects: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for o in offsets {
        out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1).as_bytes(),
    );
    out
}

/// Gives `page` the font resources `fonts` and the content stream `content`, then saves
/// `doc` at `path` (the end of every test PDF built page by page).
pub fn finish_page(
    doc: &mut mupdf::pdf::PdfDocument,
    page: &mut mupdf::pdf::PdfObject,
    fonts: mupdf::pdf::PdfObject,
    content: &str,
    path: &Path,
) {
    let mut resources = doc.new_dict().unwrap();
    resources.dict_put("Font", fonts).unwrap();
    page.dict_put("Resources", resources).unwrap();
    let stream = doc.add_stream(&mupdf::Buffer::from_bytes(content.as_bytes()).unwrap(), None, false).unwrap();
    page.dict_put("Contents", stream).unwrap();
    doc.save(path.to_str().unwrap()).unwrap();
}

/// A PDF whose pages have the given (width, height, /Rotate), each showing "Page n" in
/// Helvetica; with `outline`, one bookmark per page ("Page n", to that page). For the tests
/// that need a small well-formed PDF of known shape rather than a particular real file.
pub fn synthetic_pdf(pages: &[(u32, u32, i32)], outline: bool) -> Vec<u8> {
    let n = pages.len();
    let page_obj = |i: usize| 5 + 3 * i;
    let kids: Vec<String> = (0..n).map(|i| format!("{} 0 R", page_obj(i))).collect();
    let mut objects = vec![
        if outline {
            b"<< /Type /Catalog /Pages 2 0 R /Outlines 4 0 R /PageMode /UseOutlines >>".to_vec()
        } else {
            b"<< /Type /Catalog /Pages 2 0 R >>".to_vec()
        },
        format!("<< /Type /Pages /Kids [{}] /Count {n} >>", kids.join(" ")).into_bytes(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_vec(),
        format!("<< /Type /Outlines /First {} 0 R /Last {} 0 R /Count {n} >>", page_obj(0) + 2, page_obj(n - 1) + 2)
            .into_bytes(),
    ];
    for (i, &(w, h, rotate)) in pages.iter().enumerate() {
        let p = page_obj(i);
        objects.push(
            format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {w} {h}] /Rotate {rotate} \
                 /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
                p + 1
            )
            .into_bytes(),
        );
        objects.push(stream("", format!("BT /F1 24 Tf 36 {} Td (Page {}) Tj ET", h / 2, i + 1).as_bytes()));
        let prev = if i > 0 { format!(" /Prev {} 0 R", p - 1) } else { String::new() };
        let next = if i + 1 < n { format!(" /Next {} 0 R", p + 5) } else { String::new() };
        objects
            .push(format!("<< /Title (Page {}) /Parent 4 0 R{prev}{next} /Dest [{p} 0 R /Fit] >>", i + 1).into_bytes());
    }
    build_pdf(&objects)
}

/// Writes `bytes` to `name` in `scratch` and returns the path.
pub fn write(scratch: &Scratch, name: &str, bytes: &[u8]) -> PathBuf {
    let path = scratch.path(name);
    std::fs::write(&path, bytes).unwrap();
    path
}
