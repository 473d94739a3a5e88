//! PDF operations on MuPDF. Every operation opens its input itself, on the calling
//! thread (MuPDF contexts are per thread), and writes its output atomically.

pub(crate) mod content;
pub(crate) mod content_syntax;
pub(crate) mod graft;
pub(crate) mod lexer;
mod links;
pub(crate) mod mcid;
pub mod merge;
mod object;
pub(crate) mod open;
pub(crate) mod pages;
mod part_dests;
pub(crate) mod private_context;
pub(crate) mod private_doc;
pub(crate) mod resources;
pub(crate) mod save;
pub(crate) mod security;
pub mod split;
pub(crate) mod tree;

/// What a page operation wrote.
///
/// `pages_processed` is the number of input pages the operation went through (the
/// input's page count; for merge the sum over all inputs). `page_count` is the number
/// of pages in the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct PageOpResult {
    /// Input pages read.
    pub pages_processed: u32,
    /// Pages in the output document.
    pub page_count: u32,
    /// Size of the output file in bytes.
    pub output_bytes: u64,
}
