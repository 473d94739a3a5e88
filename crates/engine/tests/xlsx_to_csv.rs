//! xlsx -> csv: numbers as their number format displays them, text exactly as stored, and
//! every corpus workbook converts (or fails with a documented code).

mod common;

use std::path::Path;

use engine::control::JobControl;
use engine::convert::sheets::{xlsx_to_csv, XlsxToCsvOptions};
use rust_xlsxwriter::{Format, Workbook};

fn convert(input: &Path, dir: &Path) -> engine::error::Result<Vec<Vec<String>>> {
    let out = dir.join(format!("{}.csv", input.file_name().unwrap().to_string_lossy()));
    xlsx_to_csv(input, &out, &XlsxToCsvOptions::default(), &JobControl::new())?;
    Ok(parse_csv(&std::fs::read_to_string(&out).unwrap()))
}

/// RFC 4180 records (CRLF ends, quoted fields with doubled quotes).
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let (mut rows, mut row, mut field) = (Vec::new(), Vec::new(), String::new());
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\r') => {}
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    rows
}

/// (format code, value, what Excel shows). Checked against LibreOffice 7.4's CSV export of
/// the same workbook (`soffice --convert-to csv`), which shows these the same way.
// 3.14159... are values for fraction formats, not attempts at pi.
#[allow(clippy::approx_constant)]
const CASES: &[(&str, f64, &str)] = &[
    ("0.00", 1.5, "1.50"),
    ("0.00", 1051527.3933333, "1051527.39"),
    ("0.00", 1.005, "1.01"),
    ("0.0000", 0.91150001, "0.9115"),
    ("0", 2.5, "3"),
    ("#0.00", -0.125, "-0.13"),
    ("0%", 0.256, "26%"),
    ("0.00%", 0.12345, "12.35%"),
    ("0.00E+00", 12345.0, "1.23E+04"),
    ("0.00E+00", 0.000123, "1.23E-04"),
    ("#,##0", 1234567.0, "1,234,567"),
    ("#,##0.00;(#,##0.00)", -5.0, "(5.00)"),
    ("0.0 \"kg\"", 3.0, "3.0 kg"),
    ("000", 5.0, "005"),
    ("General", 0.30000000000000004, "0.3"),
    ("_($* #,##0.00_);_($* (#,##0.00);_($* \"-\"??_);_(@_)", 1234.5, " $1,234.50 "),
    ("_($* #,##0.00_);_($* (#,##0.00);_($* \"-\"??_);_(@_)", -1234.5, " $(1,234.50)"),
    ("_($* #,##0.00_);_($* (#,##0.00);_($* \"-\"??_);_(@_)", 0.0, " $-   "),
    ("[$€-407] #,##0.00", 3.0, "€ 3.00"),
    ("0.00", -0.001, "0.00"),
    ("#,##0,", 1234567.0, "1,235"),
    ("0.0,,", 1234567.0, "1.2"),
    ("##0.0E+0", 12345.0, "12.3E+3"),
    ("[>100]\"big\";[<=100]0", 150.0, "big"),
    ("#.00", 0.5, ".50"),
    ("0.0#", 1.2, "1.2"),
    ("0.00;[Red]0.00", -5.0, "5.00"),
    ("0.00E+00", 0.0, "0.00E+00"),
    ("\"$\"General", -7.0, "-$7"),
    ("0 \\m", 3.0, "3 m"),
    ("# ?/?", 1.5, "1 1/2"),
    ("# ?/?", 0.5, " 1/2"),
    ("# ?/?", 2.0, "2    "),
    ("# ?/?", -1.25, "-1 1/4"),
    ("# ??/??", 3.14159, "3 14/99"),
    ("# ??/??", 0.333, "  1/3 "),
    ("?/4", 0.8, "3/4"),
    ("# ?/8", 2.3, "2 2/8"),
    ("# ???/???", 3.14159265, "3  16/113"),
    ("0 ?/?", 0.25, "0 1/4"),
    ("# ?/?", 0.01, "0    "),
    ("# ?/?", 0.99, "1    "),
];

#[test]
fn number_formats_are_rendered_as_displayed() {
    let dir = common::Scratch::new("xlsx-numfmt");
    let path = dir.path("formats.xlsx");
    let mut wb = Workbook::new();
    let ws = wb.add_worksheet();
    for (row, (code, value, _)) in CASES.iter().enumerate() {
        ws.write_string(row as u32, 0, *code).unwrap();
        ws.write_number_with_format(row as u32, 1, *value, &Format::new().set_num_format(*code)).unwrap();
    }
    wb.save(&path).unwrap();
    let rows = convert(&path, &dir.0).unwrap();
    for (row, (code, value, shown)) in CASES.iter().enumerate() {
        assert_eq!(rows[row][1], *shown, "{value} in format {code:?}");
    }
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn text_keeps_the_spaces_at_its_ends_without_xml_space_preserve() {
    // `<t>City </t>` (Gnumeric writes no xml:space="preserve"): Excel and LibreOffice keep
    // the space; calamine alone would trim it.
    let path = common::corpus_file("xlsx-issue174-larger.xlsx");
    let dir = common::Scratch::new("xlsx-untrimmed");
    let rows = convert(&path, &dir.0).unwrap();
    assert_eq!(rows[0][4], "City ");
    assert_eq!(rows[0][3], "Address");
    assert_eq!(rows[1][4], "My City");
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn strict_ooxml_numbers_show_their_decimals() {
    let path = common::corpus_file("xlsx-strict-ooxml.xlsx");
    let dir = common::Scratch::new("xlsx-strict");
    let rows = convert(&path, &dir.0).unwrap();
    // LibreOffice's export of the same row: "150-031260-001_B",1.50,7,...,1051527.39,...,12.6183
    assert_eq!(rows[1][1], "1.50");
    assert_eq!(rows[1][9], "1051527.39");
    assert_eq!(rows[1][15], "12.6183");
    assert_eq!(rows[1][17], "104");
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn every_corpus_workbook_converts_or_is_refused_as_encrypted() {
    let dir = common::corpus_dir();
    let scratch = common::Scratch::new("xlsx-corpus");
    let mut n = 0;
    for entry in std::fs::read_dir(dir.join("files")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "xlsx") {
            continue;
        }
        n += 1;
        match convert(&path, &scratch.0) {
            Ok(_) => {}
            Err(e) => assert_eq!(e.code, engine::error::ErrorCode::EncryptedInput, "{}: {e}", path.display()),
        }
    }
    assert!(n >= 7, "corpus workbooks found: {n}");
}
