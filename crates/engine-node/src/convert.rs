//! Conversions: xlsx -> csv, csv -> xlsx (engine::convert::sheets), pdf -> docx
//! (engine::convert::docx). Options and results are the engine's structs.

use engine::convert::{docx, sheets};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::runtime::{control_of, options_from, spawn_job, JobControl};

/// Exports one sheet of an XLSX workbook as RFC 4180 CSV (UTF-8)
/// (`engine::convert::sheets::XlsxToCsvOptions`).
#[napi(
    ts_args_type = "input: string, output: string, options: XlsxToCsvOptions, control?: JobControl | null",
    ts_return_type = "Promise<XlsxToCsvResult>"
)]
pub fn xlsx_to_csv<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: Option<Unknown<'env>>,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let (options, control) = (options_from::<sheets::XlsxToCsvOptions>(env, options), control_of(control));
    spawn_job(env, move || sheets::xlsx_to_csv(input.as_ref(), output.as_ref(), &options?, &control))
}

/// Converts a CSV file to a one-sheet XLSX workbook with typed cells
/// (`engine::convert::sheets::CsvToXlsxOptions`).
#[napi(
    ts_args_type = "input: string, output: string, options: CsvToXlsxOptions, control?: JobControl | null",
    ts_return_type = "Promise<CsvToXlsxResult>"
)]
pub fn csv_to_xlsx<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: Option<Unknown<'env>>,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let (options, control) = (options_from::<sheets::CsvToXlsxOptions>(env, options), control_of(control));
    spawn_job(env, move || sheets::csv_to_xlsx(input.as_ref(), output.as_ref(), &options?, &control))
}

/// Converts a PDF to an editable DOCX from MuPDF's structured text
/// (`engine::convert::docx::PdfToDocxOptions`; `ocr` needs `ocrInit` first).
#[napi(
    ts_args_type = "input: string, output: string, options: PdfToDocxOptions, control?: JobControl | null",
    ts_return_type = "Promise<PdfToDocxResult>"
)]
pub fn pdf_to_docx<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: Option<Unknown<'env>>,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let (options, control) = (options_from::<docx::PdfToDocxOptions>(env, options), control_of(control));
    spawn_job(env, move || docx::pdf_to_docx(input.as_ref(), output.as_ref(), &options?, &control))
}
