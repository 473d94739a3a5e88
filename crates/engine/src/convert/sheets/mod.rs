//! Spreadsheet conversions: [`xlsx_to_csv`] (calamine) and [`csv_to_xlsx`] (rust_xlsxwriter).
//!
//! # xlsx -> csv
//!
//! - One sheet per job: `sheet` picks it by 0-based index (workbook order, hidden sheets
//!   included) or by exact name; default the first sheet. The result names the sheet.
//!   Chart, dialog and macro sheets have no cells and are refused (`invalid_options`).
//! - The grid starts at A1 (leading empty rows and columns are kept as empty fields) and ends
//!   at the last used cell; every record has the same number of fields (RFC 4180).
//! - Values: text exactly as stored (spaces at the ends kept even without
//!   `xml:space="preserve"`, see `raw_strings`); numbers as their number format displays
//!   them (`numfmt`): decimals rounded half away from zero on the 15-digit decimal value,
//!   `0`/`#`/`?` placeholders, thousands grouping and scaling, percent, scientific and
//!   engineering notation, quoted/escaped literals and `[$€-407]` currency, sections
//!   (positive;negative;zero) and `[>100]` conditions, `_x` padding as one space, fractions
//!   (`# ?/?`); General as the value with at most 15 significant
//!   digits, so binary noise such as `0.30000000000000004` is written `0.3`; dates and
//!   times (cells with a date/time number format) in ISO 8601 (`2024-01-31`,
//!   `2024-01-31T13:45:00`, `13:45:00`), rounded to the second, in both the 1900 and the
//!   1904 date systems; booleans `TRUE`/`FALSE`; formulas as their cached values; error
//!   cells as Excel shows them (`#DIV/0!`, `#N/A`, `#NAME?`, `#NULL!`, `#NUM!`, `#REF!`,
//!   `#VALUE!`); merged ranges give their value in the top-left cell only.
//! - Output: UTF-8 without BOM, CRLF record ends, fields quoted only when they contain the
//!   delimiter, a double quote, CR or LF (quotes doubled).
//! - Encrypted workbooks (an OLE/CFB container) fail with `encrypted_input`.
//!
//! # csv -> xlsx
//!
//! - Input: UTF-8 (a BOM is skipped), RFC 4180 quoting, CRLF or LF record ends.
//! - `delimiter`: default sniffed among `,` `;` tab `|` from the first 50 records (the
//!   candidate giving the most consistent field count above one; `,` when none does).
//! - Types: a field is written as a number only when it is a plain decimal (optional `-`, no
//!   leading zeros, at most 15 significant digits, optional fraction and exponent); as a date
//!   when it is an ISO date `YYYY-MM-DD` (format `yyyy-mm-dd`) or date-time
//!   `YYYY-MM-DDTHH:MM[:SS]` / with a space (format `yyyy-mm-dd hh:mm:ss`); everything else
//!   is text, so leading zeros (`007`), long digit strings (card numbers, IDs over 15
//!   digits) and `+`-prefixed phone numbers survive unchanged.
//! - `has_header`: the first record is written as text, bold on a grey fill with a bottom
//!   border, and frozen. Column widths follow the longest value (capped).
//! - `sheet_name`: default `Sheet1`; Excel's rules apply (1-31 characters, none of
//!   `[ ] : * ? / \`, not starting or ending with `'`, not `History`).
//! - Excel's limits (1,048,576 rows, 16,384 columns, 32,767 characters per cell) are
//!   enforced with a clear error.

mod csv_to_xlsx;
mod numfmt;
mod raw_strings;
mod xlsx_to_csv;

pub use csv_to_xlsx::{csv_to_xlsx, CsvToXlsxOptions, CsvToXlsxResult};
pub use xlsx_to_csv::{xlsx_to_csv, SheetSelector, XlsxToCsvOptions, XlsxToCsvResult};
