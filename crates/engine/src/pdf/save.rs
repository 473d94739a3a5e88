//! Writing PDFs and other outputs atomically: `<output>.tmp`, then rename.

use std::fs;
use std::path::{Path, PathBuf};

use mupdf::pdf::{Encryption, PdfDocument, PdfWriteOptions};

use crate::control::JobControl;
use crate::error::{EngineError, MuPdfResultExt, Result};
use crate::pdf::open::path_str;

/// Write options shared by every operation.
///
/// Garbage level 2 drops unreachable objects and renumbers; level 3+ de-duplicates
/// with a pairwise comparison that is quadratic in the object count (and repeats until
/// nothing changes), which a hostile file can turn into a hang. `compress` deflates
/// only streams that have no filter yet: filtered streams are copied raw, so saving
/// never decodes images or content (decompression bombs stay inert).
pub(crate) fn write_options(encryption: Encryption) -> PdfWriteOptions {
    let mut opts = PdfWriteOptions::default();
    opts.set_garbage_level(2).set_compress(true).set_encryption(encryption);
    opts
}

/// Write options for an output that is the input with a few pages changed
/// (redaction): garbage level 1 drops every object no longer reachable, like level 2,
/// but does not renumber the rest (renumbering rewrites every reference of every
/// object, a cost per document rather than per changed page). With `compress` off,
/// untouched streams are copied exactly as they are, unfiltered ones included.
pub(crate) fn patch_write_options(encryption: Encryption, compress: bool) -> PdfWriteOptions {
    let mut opts = PdfWriteOptions::default();
    opts.set_garbage_level(1).set_compress(compress).set_encryption(encryption);
    opts
}

/// Path of the temporary sibling of `output`.
pub(crate) fn tmp_path(output: &Path) -> PathBuf {
    let mut s = output.as_os_str().to_owned();
    s.push(".tmp");
    PathBuf::from(s)
}

/// Runs `write` against `<output>.tmp`, then renames it over `output` unless writing
/// failed or the job was cancelled meanwhile. Nothing is left at either path on error.
/// Returns the size of the final file.
pub(crate) fn write_atomically(
    output: &Path,
    control: &JobControl,
    write: impl FnOnce(&Path) -> Result<()>,
) -> Result<u64> {
    let tmp = tmp_path(output);
    // Creating the file here turns a missing directory or a permission problem into
    // `io_error` instead of a MuPDF message.
    fs::File::create(&tmp).map_err(|e| EngineError::io("creating the output", e))?;
    let result = write(&tmp)
        .and_then(|()| control.checkpoint())
        .and_then(|()| fs::rename(&tmp, output).map_err(|e| EngineError::io("moving the output in place", e)))
        .and_then(|()| {
            fs::metadata(output).map(|m| m.len()).map_err(|e| EngineError::io("reading the output size", e))
        });
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Saves `doc` to `output` atomically with the shared write options.
pub(crate) fn save_pdf(
    doc: &PdfDocument,
    output: &Path,
    options: PdfWriteOptions,
    control: &JobControl,
) -> Result<u64> {
    write_atomically(output, control, |tmp| doc.save_with_options(path_str(tmp)?, options).ctx("writing the PDF"))
}
