//! Page work: the operations that rasterise or re-encode page content, where the page
//! operations of [`crate::pdf`] only edit the object graph.
//!
//! - [`render`]: pages to JPEG (one page a `.jpg`, several a ZIP), on a few render threads
//!   each with a MuPDF context of its own.
//! - [`redact`]: regions burnt into their pages (the pages rendered, painted and rebuilt as
//!   one image each; the other pages copied untouched).
//! - [`compress`]: lossless (light) or image downsampling and re-encoding (balanced,
//!   strong), never larger than the input, with a content guard and safer fallbacks.
//!
//! All three check every page's content streams against the engine's decompression cap
//! before MuPDF interprets them (`invalid_pdf` for a bomb) and cap a page's raster
//! ([`render::MAX_PAGE_PIXELS`], `page_too_large`).

pub mod compress;
pub mod redact;
pub mod render;
