//! xlsx -> csv; the rules are in the [module documentation](super).

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use calamine::{CellErrorType, Data, ExcelDateTime, ExcelDateTimeType, Reader, SheetType, Xlsx};
use serde::{Deserialize, Serialize};

use super::{numfmt, raw_strings};
use crate::control::JobControl;
use crate::error::{EngineError, ErrorCode, Result};

/// Which sheet to export: a number is an index, a string a name.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum SheetSelector {
    /// 0-based position in the workbook.
    Index(usize),
    /// Exact sheet name.
    Name(String),
}

/// Options of [`xlsx_to_csv`].
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct XlsxToCsvOptions {
    /// Sheet to export; `None` = the first sheet.
    pub sheet: Option<SheetSelector>,
    /// Field delimiter (one character); default `,`.
    pub delimiter: char,
}

impl Default for XlsxToCsvOptions {
    fn default() -> Self {
        Self { sheet: None, delimiter: ',' }
    }
}

/// What [`xlsx_to_csv`] produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct XlsxToCsvResult {
    /// Name of the exported sheet.
    pub sheet_name: String,
    /// Its 0-based index.
    pub sheet_index: usize,
    /// Number of sheets in the workbook.
    pub sheet_count: usize,
    /// Records written.
    pub rows: u64,
    /// Fields per record.
    pub columns: u64,
}

const CFB_MAGIC: [u8; 8] = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];

pub(crate) fn encrypted_workbook() -> EngineError {
    EngineError::new(
        ErrorCode::EncryptedInput,
        "the workbook is password-protected (an encrypted Office file): remove the password in a spreadsheet application and upload it again",
    )
}

/// Exports one sheet of the workbook at `input` as CSV to `output` (via `<output>.tmp`).
pub fn xlsx_to_csv(
    input: &Path,
    output: &Path,
    options: &XlsxToCsvOptions,
    control: &JobControl,
) -> Result<XlsxToCsvResult> {
    control.start(1)?;
    let delimiter = options.delimiter;
    if matches!(delimiter, '"' | '\r' | '\n') {
        return Err(EngineError::invalid_options("the delimiter cannot be a double quote, CR or LF"));
    }
    let mut file = File::open(input).map_err(|e| EngineError::io("opening the input", e))?;
    let mut head = [0u8; 8];
    let n = file.read(&mut head).map_err(|e| EngineError::io("reading the input", e))?;
    if n == 8 && head == CFB_MAGIC {
        return Err(encrypted_workbook());
    }
    drop(file);
    let file = File::open(input).map_err(|e| EngineError::io("opening the input", e))?;
    let mut workbook: Xlsx<_> = Xlsx::new(BufReader::new(file))
        .map_err(|e| EngineError::new(ErrorCode::EngineError, format!("the workbook cannot be read: {e}")))?;
    let sheets = workbook.sheets_metadata().to_vec();
    if sheets.is_empty() {
        return Err(EngineError::new(ErrorCode::EngineError, "the workbook has no sheets"));
    }
    let index = match &options.sheet {
        None => 0,
        Some(SheetSelector::Index(i)) => {
            if *i >= sheets.len() {
                return Err(EngineError::invalid_options(format!(
                    "sheet index {i} is out of range: the workbook has {} sheet(s) ({})",
                    sheets.len(),
                    sheet_list(&sheets)
                )));
            }
            *i
        }
        Some(SheetSelector::Name(name)) => sheets.iter().position(|s| &s.name == name).ok_or_else(|| {
            EngineError::invalid_options(format!("no sheet named {name:?}; the workbook has: {}", sheet_list(&sheets)))
        })?,
    };
    let sheet = &sheets[index];
    if sheet.typ != SheetType::WorkSheet {
        return Err(EngineError::invalid_options(format!(
            "sheet {:?} is a {:?}, which has no cells; pick a worksheet ({})",
            sheet.name,
            sheet.typ,
            sheet_list(&sheets)
        )));
    }
    let range = workbook
        .worksheet_range(&sheet.name)
        .map_err(|e| EngineError::new(ErrorCode::EngineError, format!("sheet {:?} cannot be read: {e}", sheet.name)))?;
    // Number formats of the cells (display rounding, percent, ...); a sheet whose styles
    // cannot be read is written with plain values.
    let styles = workbook.worksheet_style(&sheet.name).unwrap_or_else(|_| calamine::StyleRange::empty());
    drop(workbook);
    let exact_text =
        File::open(input).map(|f| raw_strings::untrimmed_cells(BufReader::new(f), index)).unwrap_or_default();
    control.checkpoint()?;

    let tmp = output.with_extension("csv.tmp");
    let result = (|| -> Result<(u64, u64)> {
        let out = File::create(&tmp).map_err(|e| EngineError::io("creating the output", e))?;
        let mut w = BufWriter::new(out);
        let (rows, cols) = match (range.start(), range.end()) {
            (Some(_), Some((end_row, end_col))) => (end_row as u64 + 1, end_col as u64 + 1),
            _ => (0, 0),
        };
        let (start_row, start_col) = range.start().unwrap_or((0, 0));
        let mut field = String::new();
        let mut line = String::new();
        for r in 0..rows as u32 {
            if r % 1024 == 0 {
                control.checkpoint()?;
            }
            line.clear();
            for c in 0..cols as u32 {
                if c > 0 {
                    line.push(delimiter);
                }
                field.clear();
                if r >= start_row && c >= start_col {
                    if let Some(text) = exact_text.get(&(r, c)) {
                        field.push_str(text);
                    } else if let Some(cell) = range.get(((r - start_row) as usize, (c - start_col) as usize)) {
                        let code =
                            styles.get((r, c)).and_then(|s| s.number_format.as_ref()).map(|n| n.format_code.as_str());
                        format_cell(cell, code, &mut field);
                    }
                }
                push_field(&mut line, &field, delimiter);
            }
            line.push_str("\r\n");
            w.write_all(line.as_bytes()).map_err(|e| EngineError::io("writing the output", e))?;
        }
        w.flush().map_err(|e| EngineError::io("writing the output", e))?;
        Ok((rows, cols))
    })();
    let (rows, columns) = match result {
        Ok(v) => v,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    std::fs::rename(&tmp, output).map_err(|e| EngineError::io("writing the output", e))?;
    control.finish();
    Ok(XlsxToCsvResult { sheet_name: sheet.name.clone(), sheet_index: index, sheet_count: sheets.len(), rows, columns })
}

fn sheet_list(sheets: &[calamine::Sheet]) -> String {
    sheets.iter().enumerate().map(|(i, s)| format!("{i}: {:?}", s.name)).collect::<Vec<_>>().join(", ")
}

/// RFC 4180: quote when the field holds the delimiter, a quote, CR or LF.
pub(crate) fn push_field(line: &mut String, field: &str, delimiter: char) {
    if field.chars().any(|ch| ch == delimiter || ch == '"' || ch == '\r' || ch == '\n') {
        line.push('"');
        for ch in field.chars() {
            if ch == '"' {
                line.push('"');
            }
            line.push(ch);
        }
        line.push('"');
    } else {
        line.push_str(field);
    }
}

/// A cell as text, by the rules of the module documentation.
/// `number_format`: the cell's format code, applied to numbers (dates are already
/// [`Data::DateTime`]).
pub(crate) fn format_cell(cell: &Data, number_format: Option<&str>, out: &mut String) {
    use std::fmt::Write as _;
    let formatted = |v: f64| number_format.and_then(|code| numfmt::format_with_code(v, code));
    match cell {
        Data::Empty => {}
        Data::String(s) => out.push_str(s),
        Data::Int(i) => match formatted(*i as f64) {
            Some(s) => out.push_str(&s),
            None => {
                let _ = write!(out, "{i}");
            }
        },
        Data::Float(f) => out.push_str(&formatted(*f).unwrap_or_else(|| numfmt::format_number(*f))),
        Data::Bool(b) => out.push_str(if *b { "TRUE" } else { "FALSE" }),
        Data::DateTime(dt) => out.push_str(&format_datetime(dt)),
        Data::DateTimeIso(s) | Data::DurationIso(s) => out.push_str(s),
        Data::Error(e) => out.push_str(&error_text(e)),
    }
}

fn error_text(e: &CellErrorType) -> String {
    e.to_string()
}

fn format_datetime(dt: &ExcelDateTime) -> String {
    let value = dt.as_f64();
    if dt.is_duration() {
        let total = (value * 86400.0).round() as i64;
        let sign = if total < 0 { "-" } else { "" };
        let t = total.abs();
        return format!("{sign}{}:{:02}:{:02}", t / 3600, (t / 60) % 60, t % 60);
    }
    // Round to the second first, so 23:59:59.6 becomes the next day's 00:00:00.
    let rounded = (value * 86400.0).round() / 86400.0;
    // ExcelDateTime does not expose its date system: a 1904-system value converts the same
    // way as a fresh 1904 value.
    let is_1904 =
        dt.to_ymd_hms_milli() == ExcelDateTime::new(value, ExcelDateTimeType::DateTime, true).to_ymd_hms_milli();
    let (y, mo, d, h, mi, s, _) = ExcelDateTime::new(rounded, ExcelDateTimeType::DateTime, is_1904).to_ymd_hms_milli();
    // Time-only values are fractions of a day in both date systems.
    if (0.0..1.0).contains(&rounded) {
        return format!("{h:02}:{mi:02}:{s:02}");
    }
    let has_time = rounded.fract() != 0.0;
    if has_time {
        format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}")
    } else {
        format!("{y:04}-{mo:02}-{d:02}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_by_rfc_4180() {
        let mut l = String::new();
        push_field(&mut l, "a,b", ',');
        push_field(&mut l, "say \"hi\"", ',');
        push_field(&mut l, "plain", ',');
        push_field(&mut l, "two\nlines", ',');
        assert_eq!(l, "\"a,b\"\"say \"\"hi\"\"\"plain\"two\nlines\"");
        let mut t = String::new();
        push_field(&mut t, "a,b", ';');
        assert_eq!(t, "a,b");
    }

    #[test]
    fn dates_are_iso_8601_in_both_date_systems() {
        let d1900 = ExcelDateTime::new(45322.0, ExcelDateTimeType::DateTime, false);
        assert_eq!(format_datetime(&d1900), "2024-01-31");
        let d1904 = ExcelDateTime::new(45322.0 - 1462.0, ExcelDateTimeType::DateTime, true);
        assert_eq!(format_datetime(&d1904), "2024-01-31");
        let dt = ExcelDateTime::new(45322.5729166667, ExcelDateTimeType::DateTime, false);
        assert_eq!(format_datetime(&dt), "2024-01-31T13:45:00");
        let t = ExcelDateTime::new(0.25, ExcelDateTimeType::DateTime, false);
        assert_eq!(format_datetime(&t), "06:00:00");
    }
}
