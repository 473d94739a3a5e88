//! Addon exports of identification and the PDF page operations: `identify`, `rotate`,
//! `reorder`, `deletePages`, `merge`, `split`, `protect`, `unlock`. Each takes the engine's
//! options struct as a JS object under the API's names and resolves to the engine's result
//! struct (runtime.rs); their TypeScript types are in src/engine/contract.ts.

use std::path::PathBuf;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::runtime::{control_of, options_from, spawn_job, JobControl};

/// Sniffs the kind, page count and encryption of a file from its bytes
/// (`engine::Identification`).
#[napi(ts_return_type = "Promise<Identification>")]
pub fn identify(env: &Env, path: String) -> Result<Object<'_>> {
    spawn_job(env, move || engine::identify(&PathBuf::from(path)))
}

/// Rotates pages clockwise (`engine::RotateOptions`).
#[napi(
    ts_args_type = "input: string, output: string, options: RotateOptions, control?: JobControl | null",
    ts_return_type = "Promise<PageOpResult>"
)]
pub fn rotate<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: Option<Unknown<'env>>,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let (options, control) = (options_from::<engine::RotateOptions>(env, options), control_of(control));
    spawn_job(env, move || engine::rotate(input.as_ref(), output.as_ref(), &options?, &control))
}

/// Puts the pages in a new order (`engine::ReorderOptions`).
#[napi(
    ts_args_type = "input: string, output: string, options: ReorderOptions, control?: JobControl | null",
    ts_return_type = "Promise<PageOpResult>"
)]
pub fn reorder<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: Option<Unknown<'env>>,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let (options, control) = (options_from::<engine::ReorderOptions>(env, options), control_of(control));
    spawn_job(env, move || engine::reorder(input.as_ref(), output.as_ref(), &options?, &control))
}

/// Removes pages (`engine::DeletePagesOptions`).
#[napi(
    ts_args_type = "input: string, output: string, options: DeletePagesOptions, control?: JobControl | null",
    ts_return_type = "Promise<PageOpResult>"
)]
pub fn delete_pages<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: Option<Unknown<'env>>,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let (options, control) = (options_from::<engine::DeletePagesOptions>(env, options), control_of(control));
    spawn_job(env, move || engine::delete_pages(input.as_ref(), output.as_ref(), &options?, &control))
}

/// Merges 2..50 PDFs in order. See `engine::pdf::merge` for what survives.
#[napi(
    ts_args_type = "inputs: string[], output: string, control?: JobControl | null",
    ts_return_type = "Promise<PageOpResult>"
)]
pub fn merge<'env>(
    env: &'env Env,
    inputs: Vec<String>,
    output: String,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let control = control_of(control);
    spawn_job(env, move || {
        let inputs: Vec<PathBuf> = inputs.into_iter().map(PathBuf::from).collect();
        engine::merge(&inputs, output.as_ref(), &control)
    })
}

/// Splits a PDF into a ZIP of PDFs (`engine::SplitOptions`). Entries are `page-0001.pdf`...
/// (every_page) or `part-0001.pdf`...
#[napi(
    ts_args_type = "input: string, outputZip: string, options: SplitOptions, control?: JobControl | null",
    ts_return_type = "Promise<SplitResult>"
)]
pub fn split<'env>(
    env: &'env Env,
    input: String,
    output_zip: String,
    options: Option<Unknown<'env>>,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let (options, control) = (options_from::<engine::SplitOptions>(env, options), control_of(control));
    spawn_job(env, move || engine::split(input.as_ref(), output_zip.as_ref(), &options?, &control))
}

/// Encrypts with AES-256 (R6) (`engine::ProtectOptions`). At least one password is required.
#[napi(
    ts_args_type = "input: string, output: string, options: ProtectOptions, control?: JobControl | null",
    ts_return_type = "Promise<PageOpResult>"
)]
pub fn protect<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: Option<Unknown<'env>>,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let (options, control) = (options_from::<engine::ProtectOptions>(env, options), control_of(control));
    spawn_job(env, move || engine::protect(input.as_ref(), output.as_ref(), &options?, &control))
}

/// Removes encryption (`engine::UnlockOptions`). Owner-password-only PDFs unlock without a
/// password.
#[napi(
    ts_args_type = "input: string, output: string, options?: UnlockOptions | null, control?: JobControl | null",
    ts_return_type = "Promise<PageOpResult>"
)]
pub fn unlock<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: Option<Unknown<'env>>,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let (options, control) = (options_from::<engine::UnlockOptions>(env, options), control_of(control));
    spawn_job(env, move || engine::unlock(input.as_ref(), output.as_ref(), &options?, &control))
}
