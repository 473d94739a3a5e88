//! Conversions between formats that need no office suite: [`docx`] (pdf -> docx from
//! MuPDF's structured text, OCR for scanned pages) and [`sheets`] (xlsx -> csv, csv ->
//! xlsx). The conversions through LibreOffice (docx/xlsx -> pdf) are done by the service,
//! not here.

pub mod docx;
pub mod sheets;
