//! OCR of PDFs and images on top of the `ocr` crate (ONNX Runtime, PaddleOCR models): MuPDF
//! renders the pages, the `ocr` crate reads the pixels.
//!
//! - [`pipeline`]: loading ONNX Runtime and the models once per process ([`pipeline::ocr_init`]),
//!   then blocks JSON and/or a searchable PDF for the selected pages
//!   ([`pipeline::ocr_document`]); pages that already carry text are not OCRed.
//! - [`input`]: PDFs and JPEG/PNG/WebP images opened as PDFs for it.
//! - [`json`]: the `blocks` JSON it returns.
//! - [`searchable`]: the invisible, Unicode text layer written over the original pages;
//!   [`glyphless_font`]: its font program and `ToUnicode` map.
//! - [`turn`]: the searchable PDF's pages OCR read shown upright and straight (`rotate_pages`,
//!   `deskew`).
//!
//! Inside this module `ocr::` names the `ocr` crate, `crate::ocr` this module.

pub mod glyphless_font;
pub mod input;
pub mod json;
pub mod pdfa;
pub mod pipeline;
pub mod searchable;
pub mod turn;
