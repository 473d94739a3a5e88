//! Conversions: xlsx -> csv, csv -> xlsx (engine::convert::sheets), pdf -> docx (engine::convert::docx).

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::runtime::{control_of, integers, spawn_job, JobControl};
use engine::{EngineError, ErrorCode};

fn one_char(value: Option<String>, what: &str) -> engine::Result<Option<char>> {
    match value {
        None => Ok(None),
        Some(s) => {
            let mut it = s.chars();
            match (it.next(), it.next()) {
                (Some(c), None) => Ok(Some(c)),
                _ => Err(EngineError::new(ErrorCode::InvalidOptions, format!("{what} must be exactly one character"))),
            }
        }
    }
}

#[napi(object)]
pub struct XlsxToCsvOptions {
    /// 0-based index or exact name; default the first sheet.
    pub sheet: Option<Either<u32, String>>,
    /// One character; default ",".
    pub delimiter: Option<String>,
}

#[napi(object)]
pub struct XlsxToCsvResult {
    pub sheet_name: String,
    pub sheet_index: u32,
    pub sheet_count: u32,
    pub rows: f64,
    pub columns: f64,
}

/// Exports one sheet of an XLSX workbook as RFC 4180 CSV (UTF-8).
#[napi(ts_return_type = "Promise<XlsxToCsvResult>")]
pub fn xlsx_to_csv<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: XlsxToCsvOptions,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let control = control_of(control);
    spawn_job(env, move || {
        let opts = engine::convert::sheets::XlsxToCsvOptions {
            sheet: options.sheet.map(|s| match s {
                Either::A(i) => engine::convert::sheets::SheetSelector::Index(i as usize),
                Either::B(n) => engine::convert::sheets::SheetSelector::Name(n),
            }),
            delimiter: one_char(options.delimiter, "delimiter")?.unwrap_or(','),
        };
        engine::convert::sheets::xlsx_to_csv(input.as_ref(), output.as_ref(), &opts, &control).map(|r| {
            XlsxToCsvResult {
                sheet_name: r.sheet_name,
                sheet_index: r.sheet_index as u32,
                sheet_count: r.sheet_count as u32,
                rows: r.rows as f64,
                columns: r.columns as f64,
            }
        })
    })
}

/// The csv -> xlsx options of POST /jobs `convert`, under the API's names (snake_case).
#[napi(object)]
pub struct CsvToXlsxOptions {
    /// One character; sniffed when absent.
    pub delimiter: Option<String>,
    #[napi(js_name = "has_header")]
    pub has_header: Option<bool>,
    /// Default "Sheet1".
    #[napi(js_name = "sheet_name")]
    pub sheet_name: Option<String>,
}

#[napi(object)]
pub struct CsvToXlsxResult {
    pub delimiter: String,
    pub rows: f64,
    pub columns: f64,
    pub numbers: f64,
    pub dates: f64,
    pub texts: f64,
}

/// Converts a CSV file to a one-sheet XLSX workbook with typed cells.
#[napi(ts_return_type = "Promise<CsvToXlsxResult>")]
pub fn csv_to_xlsx<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: CsvToXlsxOptions,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let control = control_of(control);
    spawn_job(env, move || {
        let opts = engine::convert::sheets::CsvToXlsxOptions {
            delimiter: one_char(options.delimiter, "delimiter")?,
            has_header: options.has_header.unwrap_or(false),
            sheet_name: options.sheet_name,
        };
        engine::convert::sheets::csv_to_xlsx(input.as_ref(), output.as_ref(), &opts, &control).map(|r| {
            CsvToXlsxResult {
                delimiter: r.delimiter.to_string(),
                rows: r.rows as f64,
                columns: r.columns as f64,
                numbers: r.numbers as f64,
                dates: r.dates as f64,
                texts: r.texts as f64,
            }
        })
    })
}

#[napi(object)]
pub struct PdfToDocxOptions {
    /// 0-based page indexes; default all.
    pub pages: Option<Vec<f64>>,
    /// OCR pages without a text layer with the engine's OCR (needs `ocrInit` first), and
    /// check against it the lines that look unmapped.
    pub ocr: Option<bool>,
}

#[napi(object)]
pub struct PdfToDocxResult {
    pub pages_processed: u32,
    pub page_count: u32,
    pub paragraphs: u32,
    pub images: u32,
    pub images_skipped: u32,
    /// Tables written as Word tables.
    pub tables: u32,
    /// 0-based indexes of converted pages without a text layer (scans).
    pub pages_without_text: Vec<u32>,
    /// Those of them that were OCRed (all of them with `ocr: true`).
    pub pages_ocred: Vec<u32>,
    /// 0-based indexes of converted pages whose text layer looks unmapped in part (checked
    /// against OCR with `ocr: true`).
    pub pages_unmapped_text: Vec<u32>,
    /// Lines of those pages whose text the recognised words replaced.
    pub lines_recognised: u32,
    pub output_bytes: f64,
}

/// Converts a PDF to an editable DOCX from MuPDF's structured text.
#[napi(ts_return_type = "Promise<PdfToDocxResult>")]
pub fn pdf_to_docx<'env>(
    env: &'env Env,
    input: String,
    output: String,
    options: PdfToDocxOptions,
    control: Option<&JobControl>,
) -> Result<Object<'env>> {
    let control = control_of(control);
    spawn_job(env, move || {
        let pages = match options.pages {
            None => None,
            Some(p) => Some(integers(&p, "pages[]")?),
        };
        let opts =
            engine::convert::docx::PdfToDocxOptions { pages, max_pages: None, ocr: options.ocr.unwrap_or(false) };
        engine::convert::docx::pdf_to_docx(input.as_ref(), output.as_ref(), &opts, &control).map(|r| PdfToDocxResult {
            pages_processed: r.pages_processed,
            page_count: r.page_count,
            paragraphs: r.paragraphs,
            images: r.images,
            images_skipped: r.images_skipped,
            tables: r.tables,
            pages_without_text: r.pages_without_text,
            pages_ocred: r.pages_ocred,
            pages_unmapped_text: r.pages_unmapped_text,
            lines_recognised: r.lines_recognised,
            output_bytes: r.output_bytes as f64,
        })
    })
}
