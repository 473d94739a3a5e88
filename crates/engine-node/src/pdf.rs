//! Addon exports of identification and the PDF page operations: `identify`, `rotate`,
//! `reorder`, `deletePages`, `merge`, `split`, `protect`, `unlock`.

use std::path::PathBuf;

use engine::{EngineError, ErrorCode};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::runtime::{control_of, integer, integers, spawn_job, JobControl};

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
        Self { pages_processed: r.pages_processed, page_count: r.page_count, output_bytes: r.output_bytes as f64 }
    }
}

#[napi(object)]
pub struct RotateOptions {
    /// Clockwise: 90, 180 or 270; added to the existing rotation.
    pub degrees: f64,
    /// 0-based page indexes; all pages when absent.
    pub pages: Option<Vec<f64>>,
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
            pages: options.pages.as_deref().map(|p| integers(p, "pages[]")).transpose()?,
            max_pages: None,
        };
        engine::rotate(input.as_ref(), output.as_ref(), &options, &control).map(PageOpResult::from)
    })
}

#[napi(object)]
pub struct ReorderOptions {
    /// A full permutation of the 0-based page indexes: `order[k]` becomes page k.
    pub order: Vec<f64>,
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
        let options = engine::ReorderOptions { order: integers(&options.order, "order[]")?, max_pages: None };
        engine::reorder(input.as_ref(), output.as_ref(), &options, &control).map(PageOpResult::from)
    })
}

#[napi(object)]
pub struct DeletePagesOptions {
    /// 0-based indexes of pages to remove; at least one page must remain.
    pub pages: Vec<f64>,
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
        let options = engine::DeletePagesOptions { pages: integers(&options.pages, "pages[]")?, max_pages: None };
        engine::delete_pages(input.as_ref(), output.as_ref(), &options, &control).map(PageOpResult::from)
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

/// The options of POST /jobs `split`, under the API's names (snake_case), so the worker hands
/// the job's options over as they are.
#[napi(object)]
pub struct SplitOptions {
    #[napi(ts_type = "'every_page' | 'ranges' | 'chunks'")]
    pub mode: String,
    /// For `ranges`: 1-based inclusive `[start, end]` pairs.
    #[napi(ts_type = "[number, number][]")]
    pub ranges: Option<Vec<Vec<f64>>>,
    /// For `chunks`: pages per part.
    #[napi(js_name = "chunk_size")]
    pub chunk_size: Option<f64>,
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
            let size = options.chunk_size.ok_or_else(|| invalid("mode chunks needs chunk_size".into()))?;
            Ok(engine::SplitMode::Chunks(integer(size, "chunk_size")?))
        }
        "ranges" => {
            let ranges = options.ranges.as_ref().ok_or_else(|| invalid("mode ranges needs ranges".into()))?;
            let pairs = ranges
                .iter()
                .map(|r| match r.as_slice() {
                    [a, b] => Ok((integer(*a, "ranges")?, integer(*b, "ranges")?)),
                    _ => Err(invalid("each range must be a [start, end] pair".into())),
                })
                .collect::<engine::Result<Vec<_>>>()?;
            Ok(engine::SplitMode::Ranges(pairs))
        }
        other => Err(invalid(format!("mode must be every_page, ranges or chunks, not {other:?}"))),
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
        let options = engine::SplitOptions { mode: split_mode(&options)?, max_pages: None };
        let r = engine::split(input.as_ref(), output_zip.as_ref(), &options, &control)?;
        Ok(SplitResult { parts: r.parts, pages_processed: r.pages_processed, output_bytes: r.output_bytes as f64 })
    })
}

/// The options of POST /jobs `protect`, under the API's names (snake_case).
#[napi(object)]
pub struct ProtectOptions {
    #[napi(js_name = "user_password")]
    pub user_password: Option<String>,
    /// Defaults to the user password.
    #[napi(js_name = "owner_password")]
    pub owner_password: Option<String>,
    /// Each permission defaults to true.
    #[napi(js_name = "allow_print")]
    pub allow_print: Option<bool>,
    #[napi(js_name = "allow_modify")]
    pub allow_modify: Option<bool>,
    #[napi(js_name = "allow_copy")]
    pub allow_copy: Option<bool>,
    #[napi(js_name = "allow_annotate")]
    pub allow_annotate: Option<bool>,
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
            max_pages: None,
        };
        engine::protect(input.as_ref(), output.as_ref(), &options, &control).map(PageOpResult::from)
    })
}

#[napi(object)]
pub struct UnlockOptions {
    /// Needed only when the PDF asks for a password to open.
    pub password: Option<String>,
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
        let options =
            options.map_or_else(Default::default, |o| engine::UnlockOptions { password: o.password, max_pages: None });
        engine::unlock(input.as_ref(), output.as_ref(), &options, &control).map(PageOpResult::from)
    })
}
