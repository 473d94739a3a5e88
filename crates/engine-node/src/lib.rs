//! Node/Bun addon over the `engine` crate: one exported async function per capability.
//!
//! # Threads
//!
//! Every function returns a Promise at once and runs the work on the addon's own pool
//! of engine threads (size: `ENGINE_THREADS`, default the number of cores), never on
//! the JS thread and not on the runtime's libuv pool. MuPDF keeps one context per
//! thread; a document never leaves the thread that opened it. Panics are caught and
//! reported as `engine_error`.
//!
//! # Errors
//!
//! A failed operation rejects its Promise with a JS `Error` whose `code` property is the
//! engine error code (`invalid_pdf`, `encrypted_input`, `invalid_password`,
//! `invalid_options`, `cancelled`, `page_limit`, `io_error`, `engine_error`; see
//! `engine::ErrorCode`) and whose `message` is the human-readable detail. The code is
//! set natively (it is the `code` argument of `napi_create_error`), so no message
//! parsing is needed: `err.code === "encrypted_input"`.
//!
//! Option objects whose fields have the wrong JS type make the call throw
//! synchronously with N-API's own error (`code` like `"InvalidArg"`); values of the
//! right type but out of range (negative page, 45 degrees, unknown split mode) reject
//! with `invalid_options`.
//!
//! # Progress and cancellation
//!
//! `JobControl` wraps shared atomics: `cancel()` sets a flag the engine checks before
//! starting and at every page; `progress()` reads the page counters. No callbacks run
//! from engine threads into JS.

#![deny(clippy::all)]

mod convert;

mod pagework;

mod ocr;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::{mpsc, Arc, Mutex, OnceLock};

use engine::{EngineError, ErrorCode};
use napi::bindgen_prelude::*;
use napi::JsError;
use napi_derive::napi;

type Job = Box<dyn FnOnce() + Send + 'static>;

/// MuPDF recurses on nested objects; give it more room than Rust's 2 MiB default.
const ENGINE_THREAD_STACK: usize = 16 << 20;

fn submit(job: Job) {
    static POOL: OnceLock<Mutex<mpsc::Sender<Job>>> = OnceLock::new();
    let sender = POOL.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        let threads = std::env::var("ENGINE_THREADS")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
        for i in 0..threads {
            let rx = rx.clone();
            std::thread::Builder::new()
                .name(format!("engine-{i}"))
                .stack_size(ENGINE_THREAD_STACK)
                .spawn(move || loop {
                    let job = match rx.lock() {
                        Ok(guard) => guard.recv(),
                        Err(_) => return,
                    };
                    match job {
                        Ok(job) => job(),
                        Err(_) => return,
                    }
                })
                .expect("spawning an engine thread");
        }
        Mutex::new(tx)
    });
    sender
        .lock()
        .expect("engine pool lock")
        .send(job)
        .expect("engine pool is running");
}

/// Builds the JS error: `code` = engine code, `message` = detail.
fn js_error(env: &Env, e: &EngineError) -> Error {
    let native = Error::new(e.code.as_str(), e.message.clone());
    let raw = env.raw();
    let value = unsafe { JsError::from(native).into_value(raw) };
    if value.is_null() {
        return Error::new(Status::GenericFailure, e.to_string());
    }
    match unsafe { Unknown::from_napi_value(raw, value) } {
        Ok(unknown) => Error::from(unknown),
        Err(_) => Error::new(Status::GenericFailure, e.to_string()),
    }
}

type Resolver<T> = Box<dyn FnOnce(Env) -> Result<T> + Send>;

/// Runs `work` on an engine thread; the returned Promise settles with its result.
fn spawn_job<T, F>(env: &Env, work: F) -> Result<Object<'_>>
where
    T: ToNapiValue + Send + 'static,
    F: FnOnce() -> engine::Result<T> + Send + 'static,
{
    let (deferred, promise) = env.create_deferred::<T, Resolver<T>>()?;
    submit(Box::new(move || {
        let outcome = catch_unwind(AssertUnwindSafe(work)).unwrap_or_else(|panic| {
            let detail = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            Err(EngineError::new(
                ErrorCode::EngineError,
                format!("internal error: {detail}"),
            ))
        });
        deferred.resolve(Box::new(move |env| outcome.map_err(|e| js_error(&env, &e))));
    }));
    Ok(promise)
}

fn control_of(control: Option<&JobControl>) -> Arc<engine::JobControl> {
    control.map_or_else(Default::default, |c| c.inner.clone())
}

/// JS numbers that must be integers (page indexes, degrees, sizes).
fn integer(value: f64, what: &str) -> engine::Result<i64> {
    if value.is_finite() && value.fract() == 0.0 && value.abs() < 9.0e15 {
        Ok(value as i64)
    } else {
        Err(EngineError::new(
            ErrorCode::InvalidOptions,
            format!("{what} must be an integer, not {value}"),
        ))
    }
}

fn integers(values: &[f64], what: &str) -> engine::Result<Vec<i64>> {
    values.iter().map(|&v| integer(v, what)).collect()
}

// ---------------------------------------------------------------------------------
// JobControl

/// Cancellation flag and page progress shared with engine threads.
#[napi]
pub struct JobControl {
    inner: Arc<engine::JobControl>,
}

/// Pages done out of the total (0 until the engine knows it).
#[napi(object)]
pub struct Progress {
    pub done: f64,
    pub total: f64,
}

#[napi]
impl JobControl {
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Self {
            inner: Arc::new(engine::JobControl::new()),
        }
    }

    /// Asks the operation to stop at its next page checkpoint; it then rejects with
    /// code `cancelled`. Calling it before the operation starts makes it reject at once.
    #[napi]
    pub fn cancel(&self) {
        self.inner.cancel();
    }

    #[napi(getter)]
    pub fn cancelled(&self) -> bool {
        self.inner.is_cancelled()
    }

    #[napi]
    pub fn progress(&self) -> Progress {
        let p = self.inner.progress();
        Progress {
            done: p.done as f64,
            total: p.total as f64,
        }
    }
}

// ---------------------------------------------------------------------------------
// identify

/// What `identify` found. See `engine::identify` for the rules.
#[napi(object)]
pub struct Identification {
    #[napi(ts_type = "'pdf' | 'docx' | 'xlsx' | 'csv' | 'jpeg' | 'png' | 'webp' | 'unknown'")]
    pub kind: String,
    #[napi(ts_type = "number | null")]
    pub page_count: Either<u32, Null>,
    pub encrypted: bool,
    /// A password is needed to open the file (PDF user password, Office encryption).
    pub password_required: bool,
    /// `"invalid_pdf"` when the bytes look like a PDF that cannot be opened.
    pub error: Option<String>,
}

/// Sniffs the kind, page count and encryption of a file from its bytes.
#[napi(ts_return_type = "Promise<Identification>")]
pub fn identify(env: &Env, path: String) -> Result<Object<'_>> {
    spawn_job(env, move || {
        let id = engine::identify(&PathBuf::from(path))?;
        Ok(Identification {
            kind: id.kind.as_str().to_owned(),
            page_count: match id.page_count {
                Some(n) => Either::A(n),
                None => Either::B(Null),
            },
            encrypted: id.encrypted,
            password_required: id.password_required,
            error: id.error.map(|c| c.as_str().to_owned()),
        })
    })
}

// ---------------------------------------------------------------------------------
// page operations

/// Result of rotate, reorder, deletePages, merge, protect and unlock.
#[napi(object)]
pub struct PageOpResult {
    /// Input pages read (sum over inputs for merge).
    pub pages_processed: u32,
    /// Pages in the output.
    pub page_count: u32,
    pub output_bytes: f64,
}

impl From<engine::PageOpResult> for PageOpResult {
    fn from(r: engine::PageOpResult) -> Self {
        Self {
            pages_processed: r.pages_processed,
            page_count: r.page_count,
            output_bytes: r.output_bytes as f64,
        }
    }
}

#[napi(object)]
pub struct RotateOptions {
    /// Clockwise: 90, 180 or 270; added to the existing rotation.
    pub degrees: f64,
    /// 0-based page indexes; all pages when absent.
    pub pages: Option<Vec<f64>>,
    /// Reject with `page_limit` when the input has more pages.
    pub max_pages: Option<u32>,
}

#[napi(ts_return_type = "Promise<PageOpResult>")]
pub fn rotate<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: RotateOptions,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let control = control_of(control);
    spawn_job(env, move || {
        let options = engine::RotateOptions {
            degrees: integer(options.degrees, "degrees")?,
            pages: options
                .pages
                .as_deref()
                .map(|p| integers(p, "pages[]"))
                .transpose()?,
            max_pages: options.max_pages,
        };
        engine::rotate(input.as_ref(), output.as_ref(), &options, &control).map(PageOpResult::from)
    })
}

#[napi(object)]
pub struct ReorderOptions {
    /// A full permutation of the 0-based page indexes: `order[k]` becomes page k.
    pub order: Vec<f64>,
    pub max_pages: Option<u32>,
}

#[napi(ts_return_type = "Promise<PageOpResult>")]
pub fn reorder<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: ReorderOptions,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let control = control_of(control);
    spawn_job(env, move || {
        let options = engine::ReorderOptions {
            order: integers(&options.order, "order[]")?,
            max_pages: options.max_pages,
        };
        engine::reorder(input.as_ref(), output.as_ref(), &options, &control).map(PageOpResult::from)
    })
}

#[napi(object)]
pub struct DeletePagesOptions {
    /// 0-based indexes of pages to remove; at least one page must remain.
    pub pages: Vec<f64>,
    pub max_pages: Option<u32>,
}

#[napi(ts_return_type = "Promise<PageOpResult>")]
pub fn delete_pages<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: DeletePagesOptions,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let control = control_of(control);
    spawn_job(env, move || {
        let options = engine::DeletePagesOptions {
            pages: integers(&options.pages, "pages[]")?,
            max_pages: options.max_pages,
        };
        engine::delete_pages(input.as_ref(), output.as_ref(), &options, &control)
            .map(PageOpResult::from)
    })
}

/// Merges 2..50 PDFs in order. See `engine::pdf::merge` for what survives.
#[napi(ts_return_type = "Promise<PageOpResult>")]
pub fn merge<'env>(
    env: &'env Env,
    inputs: Vec<String>,
    output: String,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let control = control_of(control);
    spawn_job(env, move || {
        let inputs: Vec<PathBuf> = inputs.into_iter().map(PathBuf::from).collect();
        engine::merge(&inputs, output.as_ref(), &control).map(PageOpResult::from)
    })
}

#[napi(object)]
pub struct SplitOptions {
    #[napi(ts_type = "'every_page' | 'ranges' | 'chunks'")]
    pub mode: String,
    /// For `ranges`: 1-based inclusive `[start, end]` pairs.
    #[napi(ts_type = "[number, number][]")]
    pub ranges: Option<Vec<Vec<f64>>>,
    /// For `chunks`: pages per part.
    pub chunk_size: Option<f64>,
    pub max_pages: Option<u32>,
}

/// Result of split. Entries are `page-0001.pdf`... (every_page) or `part-0001.pdf`...
#[napi(object)]
pub struct SplitResult {
    pub parts: u32,
    pub pages_processed: u32,
    pub output_bytes: f64,
}

fn split_mode(options: &SplitOptions) -> engine::Result<engine::SplitMode> {
    let invalid = |m: String| EngineError::new(ErrorCode::InvalidOptions, m);
    match options.mode.as_str() {
        "every_page" => Ok(engine::SplitMode::EveryPage),
        "chunks" => {
            let size = options
                .chunk_size
                .ok_or_else(|| invalid("mode chunks needs chunkSize".into()))?;
            Ok(engine::SplitMode::Chunks(integer(size, "chunkSize")?))
        }
        "ranges" => {
            let ranges = options
                .ranges
                .as_ref()
                .ok_or_else(|| invalid("mode ranges needs ranges".into()))?;
            let pairs = ranges
                .iter()
                .map(|r| match r.as_slice() {
                    [a, b] => Ok((integer(*a, "ranges")?, integer(*b, "ranges")?)),
                    _ => Err(invalid("each range must be a [start, end] pair".into())),
                })
                .collect::<engine::Result<Vec<_>>>()?;
            Ok(engine::SplitMode::Ranges(pairs))
        }
        other => Err(invalid(format!(
            "mode must be every_page, ranges or chunks, not {other:?}"
        ))),
    }
}

#[napi(ts_return_type = "Promise<SplitResult>")]
pub fn split<'env>(
    env: &'env Env,
    input: String,
    output_zip: String,
    options: SplitOptions,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let control = control_of(control);
    spawn_job(env, move || {
        let options = engine::SplitOptions {
            mode: split_mode(&options)?,
            max_pages: options.max_pages,
        };
        let r = engine::split(input.as_ref(), output_zip.as_ref(), &options, &control)?;
        Ok(SplitResult {
            parts: r.parts,
            pages_processed: r.pages_processed,
            output_bytes: r.output_bytes as f64,
        })
    })
}

#[napi(object)]
pub struct ProtectOptions {
    pub user_password: Option<String>,
    /// Defaults to the user password.
    pub owner_password: Option<String>,
    /// Each permission defaults to true.
    pub allow_print: Option<bool>,
    pub allow_modify: Option<bool>,
    pub allow_copy: Option<bool>,
    pub allow_annotate: Option<bool>,
    pub max_pages: Option<u32>,
}

/// Encrypts with AES-256 (R6). At least one password is required.
#[napi(ts_return_type = "Promise<PageOpResult>")]
pub fn protect<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: ProtectOptions,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let control = control_of(control);
    spawn_job(env, move || {
        let options = engine::ProtectOptions {
            user_password: options.user_password,
            owner_password: options.owner_password,
            allow_print: options.allow_print,
            allow_modify: options.allow_modify,
            allow_copy: options.allow_copy,
            allow_annotate: options.allow_annotate,
            max_pages: options.max_pages,
        };
        engine::protect(input.as_ref(), output.as_ref(), &options, &control).map(PageOpResult::from)
    })
}

#[napi(object)]
pub struct UnlockOptions {
    /// Needed only when the PDF asks for a password to open.
    pub password: Option<String>,
    pub max_pages: Option<u32>,
}

/// Removes encryption. Owner-password-only PDFs unlock without a password.
#[napi(ts_return_type = "Promise<PageOpResult>")]
pub fn unlock<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: Option<UnlockOptions>,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let control = control_of(control);
    spawn_job(env, move || {
        let options = options.map_or_else(Default::default, |o| engine::UnlockOptions {
            password: o.password,
            max_pages: o.max_pages,
        });
        engine::unlock(input.as_ref(), output.as_ref(), &options, &control).map(PageOpResult::from)
    })
}
