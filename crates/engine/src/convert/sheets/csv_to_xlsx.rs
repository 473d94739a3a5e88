//! csv -> xlsx; the rules are in the [module documentation](super).

use std::path::Path;

use rust_xlsxwriter::{Color, ExcelDateTime, Format, FormatBorder, Workbook};
use serde::{Deserialize, Serialize};

use crate::control::JobControl;
use crate::error::{EngineError, ErrorCode, Result};

/// Options of [`csv_to_xlsx`].
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CsvToXlsxOptions {
    /// Field delimiter; `None` = sniffed.
    pub delimiter: Option<char>,
    /// The first record is a header (styled and frozen).
    pub has_header: bool,
    /// Worksheet name; `None` = `Sheet1`.
    pub sheet_name: Option<String>,
}

/// What [`csv_to_xlsx`] produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CsvToXlsxResult {
    /// The delimiter used (given or sniffed).
    pub delimiter: char,
    /// Records written (header included).
    pub rows: u64,
    /// Widest record, in fields.
    pub columns: u64,
    /// Cells written as numbers.
    pub numbers: u64,
    /// Cells written as dates or date-times.
    pub dates: u64,
    /// Cells written as text.
    pub texts: u64,
}

const MAX_ROWS: usize = 1_048_576;
const MAX_COLS: usize = 16_384;
const MAX_CELL_CHARS: usize = 32_767;
const SNIFF_RECORDS: usize = 50;

/// Parses RFC 4180 text: quoted fields may hold delimiters, doubled quotes and line breaks.
/// Lenient like spreadsheet applications: a quote inside an unquoted field is literal, and
/// text after a closing quote is appended. Blank lines are skipped.
pub(crate) fn parse_records(text: &str, delimiter: char, limit: Option<usize>) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut in_quotes = false;
    let mut field_started = false;
    let mut line_has_content = false;
    while let Some(ch) = chars.next() {
        if in_quotes {
            if ch == '"' {
                if chars.peek() == Some(&'"') {
                    chars.next();
                    field.push('"');
                } else {
                    in_quotes = false;
                }
            } else {
                field.push(ch);
            }
            continue;
        }
        if ch == '"' && !field_started {
            in_quotes = true;
            field_started = true;
            line_has_content = true;
        } else if ch == delimiter {
            record.push(std::mem::take(&mut field));
            field_started = false;
            line_has_content = true;
        } else if ch == '\r' || ch == '\n' {
            if ch == '\r' && chars.peek() == Some(&'\n') {
                chars.next();
            }
            if line_has_content || !field.is_empty() {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
                if limit.is_some_and(|l| records.len() >= l) {
                    return records;
                }
            }
            field_started = false;
            line_has_content = false;
        } else {
            field.push(ch);
            field_started = true;
            line_has_content = true;
        }
    }
    if line_has_content || !field.is_empty() || in_quotes {
        record.push(field);
        records.push(record);
    }
    records
}

/// The delimiter among `,` `;` tab `|` that splits the first records most consistently.
pub fn sniff_delimiter(text: &str) -> char {
    let mut best = (',', 0.0f64);
    for cand in [',', ';', '\t', '|'] {
        let recs = parse_records(text, cand, Some(SNIFF_RECORDS));
        if recs.is_empty() {
            continue;
        }
        let counts: Vec<usize> = recs.iter().map(|r| r.len()).collect();
        let first = counts[0];
        if first < 2 {
            continue;
        }
        let same = counts.iter().filter(|&&c| c == first).count() as f64 / counts.len() as f64;
        // Consistency first, then more fields.
        let score = same * 1000.0 + first.min(999) as f64;
        if score > best.1 {
            best = (cand, score);
        }
    }
    best.0
}

#[derive(Debug, PartialEq)]
pub(crate) enum Typed {
    Number(f64),
    Date(u16, u8, u8),
    DateTime(u16, u8, u8, u8, u8, u8),
    Text,
}

/// Number only for plain decimals that a spreadsheet keeps exactly as written.
pub(crate) fn classify(field: &str) -> Typed {
    let s = field;
    if s.is_empty() || s.len() > 40 {
        return Typed::Text;
    }
    if let Some(t) = classify_date(s) {
        return t;
    }
    let b = s.as_bytes();
    let mut i = 0;
    if b[0] == b'-' {
        i = 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = &s[int_start..i];
    if int_digits.is_empty() {
        return Typed::Text; // ".5", "-", "+1", "abc"
    }
    if int_digits.len() > 1 && int_digits.starts_with('0') {
        return Typed::Text; // leading zeros: a code, not a quantity
    }
    let mut frac_digits = "";
    if i < b.len() && b[i] == b'.' {
        let fs = i + 1;
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        frac_digits = &s[fs..i];
        if frac_digits.is_empty() {
            return Typed::Text; // "1."
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let es = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j == es || j - es > 3 {
            return Typed::Text;
        }
        i = j;
    }
    if i != b.len() {
        return Typed::Text;
    }
    let significant = format!("{int_digits}{frac_digits}");
    let significant = significant.trim_start_matches('0').trim_end_matches('0');
    if significant.len() > 15 {
        return Typed::Text; // would lose digits as a double (IDs, card numbers)
    }
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() => Typed::Number(v),
        _ => Typed::Text,
    }
}

fn digits(s: &str) -> Option<u32> {
    if !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()) {
        s.parse().ok()
    } else {
        None
    }
}

fn classify_date(s: &str) -> Option<Typed> {
    if s.len() < 10 || s.as_bytes()[4] != b'-' || s.as_bytes()[7] != b'-' {
        return None;
    }
    let y = digits(s.get(0..4)?)?;
    let m = digits(s.get(5..7)?)?;
    let d = digits(s.get(8..10)?)?;
    if !(1900..=9999).contains(&y) || !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    if s.len() == 10 {
        return Some(Typed::Date(y as u16, m as u8, d as u8));
    }
    let rest = &s[10..];
    let sep = rest.as_bytes()[0];
    if sep != b'T' && sep != b' ' {
        return None;
    }
    let t = &rest[1..];
    let (h, mi, sec) = match t.len() {
        5 if t.as_bytes()[2] == b':' => (digits(&t[0..2])?, digits(&t[3..5])?, 0),
        8 if t.as_bytes()[2] == b':' && t.as_bytes()[5] == b':' => {
            (digits(&t[0..2])?, digits(&t[3..5])?, digits(&t[6..8])?)
        }
        _ => return None,
    };
    if h > 23 || mi > 59 || sec > 59 {
        return None;
    }
    Some(Typed::DateTime(y as u16, m as u8, d as u8, h as u8, mi as u8, sec as u8))
}

fn days_in_month(y: u32, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400) => 29,
        _ => 28,
    }
}

/// Excel's sheet-name rules.
fn check_sheet_name(name: &str) -> Result<()> {
    let n = name.chars().count();
    if n == 0 || n > 31 {
        return Err(EngineError::invalid_options("sheet_name must have 1 to 31 characters"));
    }
    if let Some(c) = name.chars().find(|c| matches!(c, '[' | ']' | ':' | '*' | '?' | '/' | '\\')) {
        return Err(EngineError::invalid_options(format!(
            "sheet_name cannot contain {c:?} (Excel forbids [ ] : * ? / \\)"
        )));
    }
    if name.starts_with('\'') || name.ends_with('\'') {
        return Err(EngineError::invalid_options("sheet_name cannot start or end with an apostrophe"));
    }
    if name.eq_ignore_ascii_case("history") {
        return Err(EngineError::invalid_options("sheet_name cannot be \"History\" (reserved by Excel)"));
    }
    Ok(())
}

fn xlsx_err(e: rust_xlsxwriter::XlsxError) -> EngineError {
    EngineError::new(ErrorCode::EngineError, format!("writing the workbook: {e}"))
}

/// Converts the CSV at `input` to a one-sheet workbook at `output` (via `<output>.tmp`).
pub fn csv_to_xlsx(
    input: &Path,
    output: &Path,
    options: &CsvToXlsxOptions,
    control: &JobControl,
) -> Result<CsvToXlsxResult> {
    control.start(1)?;
    let sheet_name = options.sheet_name.clone().unwrap_or_else(|| "Sheet1".to_owned());
    check_sheet_name(&sheet_name)?;
    if let Some(d) = options.delimiter {
        if matches!(d, '"' | '\r' | '\n') {
            return Err(EngineError::invalid_options("the delimiter cannot be a double quote, CR or LF"));
        }
    }
    let bytes = std::fs::read(input).map_err(|e| EngineError::io("reading the input", e))?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|e| EngineError::new(ErrorCode::EngineError, format!("the CSV is not valid UTF-8 ({e})")))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let delimiter = options.delimiter.unwrap_or_else(|| sniff_delimiter(text));
    let records = parse_records(text, delimiter, None);
    control.checkpoint()?;
    if records.len() > MAX_ROWS {
        return Err(EngineError::new(
            ErrorCode::EngineError,
            format!("the CSV has {} records; a worksheet holds at most {MAX_ROWS} rows", records.len()),
        ));
    }
    let columns = records.iter().map(|r| r.len()).max().unwrap_or(0);
    if columns > MAX_COLS {
        return Err(EngineError::new(
            ErrorCode::EngineError,
            format!("the CSV has {columns} fields in a record; a worksheet holds at most {MAX_COLS} columns"),
        ));
    }

    let mut workbook = Workbook::new();
    let header_format =
        Format::new().set_bold().set_background_color(Color::RGB(0xD9D9D9)).set_border_bottom(FormatBorder::Thin);
    let date_format = Format::new().set_num_format("yyyy-mm-dd");
    let datetime_format = Format::new().set_num_format("yyyy-mm-dd hh:mm:ss");
    let mut result = CsvToXlsxResult {
        delimiter,
        rows: records.len() as u64,
        columns: columns as u64,
        numbers: 0,
        dates: 0,
        texts: 0,
    };
    let mut widths = vec![0usize; columns];
    {
        let sheet = workbook.add_worksheet();
        sheet.set_name(&sheet_name).map_err(|e| EngineError::invalid_options(format!("sheet_name: {e}")))?;
        for (r, record) in records.iter().enumerate() {
            if r % 1024 == 0 {
                control.checkpoint()?;
            }
            let row = r as u32;
            let header = options.has_header && r == 0;
            for (c, field) in record.iter().enumerate() {
                let col = c as u16;
                let chars = field.chars().count();
                if chars > MAX_CELL_CHARS {
                    return Err(EngineError::new(
                        ErrorCode::EngineError,
                        format!(
                            "record {} field {} has {chars} characters; a cell holds at most {MAX_CELL_CHARS}",
                            r + 1,
                            c + 1
                        ),
                    ));
                }
                widths[c] = widths[c].max(chars);
                if header {
                    sheet.write_string_with_format(row, col, field, &header_format).map_err(xlsx_err)?;
                    continue;
                }
                if field.is_empty() {
                    continue;
                }
                match classify(field) {
                    Typed::Number(v) => {
                        sheet.write_number(row, col, v).map_err(xlsx_err)?;
                        result.numbers += 1;
                    }
                    Typed::Date(y, m, d) => {
                        let dt = ExcelDateTime::from_ymd(y, m, d).map_err(xlsx_err)?;
                        sheet.write_datetime_with_format(row, col, &dt, &date_format).map_err(xlsx_err)?;
                        widths[c] = widths[c].max(10);
                        result.dates += 1;
                    }
                    Typed::DateTime(y, m, d, h, mi, s) => {
                        let dt = ExcelDateTime::from_ymd(y, m, d)
                            .and_then(|dt| dt.and_hms(h as u16, mi, s))
                            .map_err(xlsx_err)?;
                        sheet.write_datetime_with_format(row, col, &dt, &datetime_format).map_err(xlsx_err)?;
                        widths[c] = widths[c].max(19);
                        result.dates += 1;
                    }
                    Typed::Text => {
                        sheet.write_string(row, col, field).map_err(xlsx_err)?;
                        result.texts += 1;
                    }
                }
            }
        }
        for (c, w) in widths.iter().enumerate() {
            if *w > 0 {
                sheet.set_column_width(c as u16, (*w as f64 + 2.0).min(60.0)).map_err(xlsx_err)?;
            }
        }
        if options.has_header && !records.is_empty() {
            sheet.set_freeze_panes(1, 0).map_err(xlsx_err)?;
        }
    }
    control.checkpoint()?;
    let tmp = output.with_extension("xlsx.tmp");
    if let Err(e) = workbook.save(&tmp) {
        let _ = std::fs::remove_file(&tmp);
        return Err(xlsx_err(e));
    }
    std::fs::rename(&tmp, output).map_err(|e| EngineError::io("writing the output", e))?;
    control.finish();
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_typed_only_when_exact() {
        assert_eq!(classify("42"), Typed::Number(42.0));
        assert_eq!(classify("-3.25"), Typed::Number(-3.25));
        assert_eq!(classify("1.5e3"), Typed::Number(1500.0));
        assert_eq!(classify("0"), Typed::Number(0.0));
        assert_eq!(classify("0.5"), Typed::Number(0.5));
        assert_eq!(classify("007"), Typed::Text);
        assert_eq!(classify("+15551234567"), Typed::Text);
        assert_eq!(classify("4111111111111111"), Typed::Text); // 16 digits
        assert_eq!(classify("123456789012345"), Typed::Number(123456789012345.0));
        assert_eq!(classify("1,234"), Typed::Text);
        assert_eq!(classify(" 1"), Typed::Text);
        assert_eq!(classify("NaN"), Typed::Text);
        assert_eq!(classify("inf"), Typed::Text);
    }

    #[test]
    fn iso_dates_are_typed_and_impossible_dates_are_text() {
        assert_eq!(classify("2024-02-29"), Typed::Date(2024, 2, 29));
        assert_eq!(classify("2023-02-29"), Typed::Text);
        assert_eq!(classify("2024-01-31T13:45:00"), Typed::DateTime(2024, 1, 31, 13, 45, 0));
        assert_eq!(classify("2024-01-31 13:45"), Typed::DateTime(2024, 1, 31, 13, 45, 0));
        assert_eq!(classify("31/01/2024"), Typed::Text);
        assert_eq!(classify("2024-13-01"), Typed::Text);
    }

    #[test]
    fn rfc_4180_records_with_quotes_and_line_breaks() {
        let r = parse_records("a,\"b,c\",\"say \"\"hi\"\"\"\r\n\r\n1,\"two\nlines\",3\n", ',', None);
        assert_eq!(r, vec![vec!["a", "b,c", "say \"hi\""], vec!["1", "two\nlines", "3"]]);
    }

    #[test]
    fn delimiter_is_sniffed() {
        assert_eq!(sniff_delimiter("a;b;c\n1;2,5;3\n"), ';');
        assert_eq!(sniff_delimiter("a\tb\n1\t2\n"), '\t');
        assert_eq!(sniff_delimiter("a,b\n1,2\n"), ',');
        assert_eq!(sniff_delimiter("just one column\nvalue\n"), ',');
    }
}
