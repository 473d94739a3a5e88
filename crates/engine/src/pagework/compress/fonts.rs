//! The engine's half of the fonts pass: Type 1 programs turned into CFF subsets and ToUnicode
//! CMaps cut to the codes shown, between the C side's two calls on the same document
//! (`csrc/compress_fonts.c`):
//!
//! 1. [`Doc::fonts_collect`]: MuPDF's subsetter runs, and C copies out each Type 1 program in
//!    use with the names of its glyphs shown (MuPDF's content processor and FreeType's names)
//!    and each one-byte ToUnicode CMap with the codes shown;
//! 2. here: each program is parsed (`type1.rs`), its glyphs kept converted (`t1_outline.rs`,
//!    `t2_write.rs`) and a CFF program written (`cff_write.rs`); each CMap is cut
//!    (`tounicode.rs`);
//! 3. [`Doc::fonts_install`]: C puts back each new program FreeType reads and that is
//!    smaller, and each cut CMap, and does the cuts that need no engine (bare CFF programs,
//!    unused Type 3 glyphs).
//!
//! Any failure gives no program and the font stays as it is; a panic in the converter is
//! caught here (the font is kept).

use super::cff_write::write_cff;
use super::ffi::{CmapCopy, Doc, FontsInstalled, Type1Copy};
use super::{tounicode, type1};

/// What the fonts pass did: the guard runs after it when MuPDF's subsetter ran through or
/// some font changed.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct FontsReport {
    /// MuPDF's subsetter ran through.
    pub subset: bool,
    pub installed: FontsInstalled,
}

impl FontsReport {
    /// True when the fonts of the document may have changed.
    pub fn changed(&self) -> bool {
        let i = &self.installed;
        self.subset || i.type1_converted + i.cff_subset + i.cmaps_cut + i.type3_trimmed > 0
    }
}

/// The fonts pass on `doc` (not encrypted; the C side checks). Err: the C side's message.
pub(crate) fn run(doc: &mut Doc) -> std::result::Result<FontsReport, String> {
    let subset = doc.fonts_collect()?;
    let programs: Vec<Option<Vec<u8>>> = doc.type1_copies().iter().map(convert).collect();
    let cmaps: Vec<Option<Vec<u8>>> = doc.cmap_copies().iter().map(cut).collect();
    let installed = doc.fonts_install(&programs, &cmaps)?;
    Ok(FontsReport { subset, installed })
}

/// The CFF program of the Type 1 program `data` with the glyphs `names` (all of them
/// when `names` is `None`); `None` when the program cannot be read or converted.
pub(crate) fn type1_to_cff(data: &[u8], len1: usize, len2: usize, names: Option<&[String]>) -> Option<Vec<u8>> {
    let font = type1::parse(data, len1, len2)?;
    write_cff(&font, names)
}

/// One copied program converted, its glyphs named by `names` (NUL-ended names).
fn convert(p: &Type1Copy<'_>) -> Option<Vec<u8>> {
    std::panic::catch_unwind(|| {
        let list: Vec<String> = p
            .names
            .split(|&b| b == 0)
            .filter(|n| !n.is_empty())
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .collect();
        type1_to_cff(p.data, p.length1, p.length2, (!p.keep_all).then_some(list.as_slice()))
    })
    .ok()
    .flatten()
}

/// One copied CMap cut to the codes shown.
fn cut(c: &CmapCopy<'_>) -> Option<Vec<u8>> {
    std::panic::catch_unwind(|| {
        let mut set = [false; 256];
        for (s, &u) in set.iter_mut().zip(c.used) {
            *s = u != 0;
        }
        tounicode::cut(c.data, &set)
    })
    .ok()
    .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
    fn the_programs_copied_out_are_converted_and_installed_in_the_same_document() {
        let path = std::path::Path::new(env!("DOCPROC_CORPUS_DIR")).join("files/latex-multicolumn.pdf");
        let mut doc = Doc::open(&path).unwrap();
        assert!(doc.fonts_collect().unwrap(), "MuPDF's subsetter ran through");
        let programs: Vec<Option<Vec<u8>>> = doc.type1_copies().iter().map(convert).collect();
        let cmaps: Vec<Option<Vec<u8>>> = doc.cmap_copies().iter().map(cut).collect();
        assert!(programs.len() >= 2 && programs.iter().all(Option::is_some), "{} programs", programs.len());
        let installed = doc.fonts_install(&programs, &cmaps).unwrap();
        assert_eq!(installed.type1_converted as usize, programs.len());
        // The document now holds CFF programs only: nothing is left to copy out.
        doc.fonts_collect().unwrap();
        assert_eq!(doc.type1_copies().len(), 0);
        doc.fonts_install(&[], &[]).unwrap();
    }
}
