//! Which recogniser reads a request's languages: Tesseract-style codes (`eng`, `jpn`, ...)
//! to the recognition model whose dictionary covers them all, and whether a character is CJK.
//!
//! The recognisers and the codes each reads are listed once, in `models/manifest.json`
//! (`rec` entries with `languages`); the first recogniser in manifest order that reads every
//! requested code is chosen, so the cheapest model that covers a request runs (the default
//! PP-OCRv6 tiny for Latin script and Chinese, the larger PP-OCRv6 small only when a
//! request names Japanese or Traditional Chinese).

/// The codes each recogniser reads, in manifest order; the first is the default.
#[derive(Clone, Debug)]
pub struct LanguageSets {
    sets: Vec<Vec<String>>,
}

/// Why a request's languages cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LanguageError {
    /// An empty list.
    Empty,
    /// Codes no recogniser reads (in request order).
    Unsupported(Vec<String>),
    /// Every code is read by some recogniser, but no single recogniser reads them all.
    NoCommonRecogniser(Vec<String>),
    /// Codes no ONNX recogniser reads and whose Tesseract traineddata is not installed.
    NotInstalled(Vec<String>),
}

impl std::fmt::Display for LanguageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Empty => write!(f, "languages must name at least one language"),
            Self::Unsupported(c) => write!(f, "unsupported language code(s): {}", c.join(", ")),
            Self::NoCommonRecogniser(c) => write!(f, "no recogniser reads all of {} together", c.join(", ")),
            Self::NotInstalled(c) => {
                let hints: Vec<String> = c
                    .iter()
                    .map(|code| format!("{code:?}: {}", crate::tesseract::tessdata::install_hint(code)))
                    .collect();
                write!(f, "language(s) not installed: {}", hints.join("; "))
            }
        }
    }
}

impl LanguageSets {
    /// The sets in manifest order; the first is the default recogniser's.
    pub fn new(sets: Vec<Vec<String>>) -> Self {
        Self { sets }
    }

    /// Every supported code, each once, in manifest order.
    pub fn supported(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for c in self.sets.iter().flatten() {
            if !out.contains(&c.as_str()) {
                out.push(c);
            }
        }
        out
    }

    /// Index of the recogniser for `requested`: `None` (absent) is the default (0);
    /// otherwise the first recogniser whose codes include every requested one.
    pub fn choose(&self, requested: Option<&[String]>) -> Result<usize, LanguageError> {
        let Some(requested) = requested else { return Ok(0) };
        if requested.is_empty() {
            return Err(LanguageError::Empty);
        }
        let supported = self.supported();
        let unknown: Vec<String> = requested.iter().filter(|c| !supported.contains(&c.as_str())).cloned().collect();
        if !unknown.is_empty() {
            return Err(LanguageError::Unsupported(unknown));
        }
        self.sets
            .iter()
            .position(|set| requested.iter().all(|c| set.contains(c)))
            .ok_or_else(|| LanguageError::NoCommonRecogniser(requested.to_vec()))
    }
}

impl LanguageSets {
    /// What reads `requested` when Tesseract has the traineddata `tesseract`: the first ONNX
    /// recogniser that reads every code (they read their languages better than Tesseract), else
    /// Tesseract when every code is installed. Codes neither reads are
    /// [`LanguageError::NotInstalled`] (the message says how to install them).
    pub fn choose_reader(
        &self,
        requested: Option<&[String]>,
        tesseract: &[String],
    ) -> Result<crate::Reader, LanguageError> {
        match self.choose(requested) {
            Ok(i) => Ok(crate::Reader::Model(i)),
            Err(LanguageError::Empty) => Err(LanguageError::Empty),
            Err(_) => {
                let requested = requested.unwrap_or_default();
                if requested.iter().all(|c| tesseract.contains(c)) {
                    return Ok(crate::Reader::Tesseract(requested.to_vec()));
                }
                let models = self.supported();
                let missing: Vec<String> = requested
                    .iter()
                    .filter(|c| !tesseract.contains(c) && !models.contains(&c.as_str()))
                    .cloned()
                    .collect();
                if missing.is_empty() {
                    Err(LanguageError::NoCommonRecogniser(requested.to_vec()))
                } else {
                    Err(LanguageError::NotInstalled(missing))
                }
            }
        }
    }
}

/// Whether a character is written without spaces between words: Han ideographs, kana,
/// Hangul syllables, and the CJK punctuation and full-width forms around them. Space
/// recovery never inserts a space between two of these (Japanese and Chinese lines have
/// none; a wide gap there is layout, not a word break).
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x2E80..=0x2FDF      // radicals
        | 0x3000..=0x303F    // CJK symbols and punctuation
        | 0x3040..=0x30FF    // hiragana, katakana
        | 0x3100..=0x312F    // bopomofo
        | 0x3190..=0x31FF    // kanbun, katakana extensions
        | 0x3400..=0x4DBF    // extension A
        | 0x4E00..=0x9FFF    // unified ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF    // compatibility ideographs
        | 0xFF00..=0xFFEF    // half- and full-width forms
        | 0x20000..=0x3134F) // extensions B-G
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sets() -> LanguageSets {
        let s = |v: &[&str]| v.iter().map(|c| c.to_string()).collect::<Vec<_>>();
        LanguageSets::new(vec![s(&["eng", "deu", "chi_sim"]), s(&["eng", "deu", "chi_sim", "jpn", "chi_tra"])])
    }
    fn req(v: &[&str]) -> Vec<String> {
        v.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn absent_languages_choose_the_default_recogniser() {
        assert_eq!(sets().choose(None), Ok(0));
    }

    #[test]
    fn latin_languages_keep_the_default_recogniser() {
        assert_eq!(sets().choose(Some(&req(&["deu", "eng"]))), Ok(0));
        assert_eq!(sets().choose(Some(&req(&["chi_sim"]))), Ok(0));
    }

    #[test]
    fn japanese_chooses_the_first_recogniser_that_reads_it() {
        assert_eq!(sets().choose(Some(&req(&["jpn"]))), Ok(1));
        // Mixed with a language both read: still the one that reads all of them.
        assert_eq!(sets().choose(Some(&req(&["eng", "jpn"]))), Ok(1));
        assert_eq!(sets().choose(Some(&req(&["chi_tra", "chi_sim"]))), Ok(1));
    }

    #[test]
    fn empty_and_unknown_codes_are_errors_naming_the_codes() {
        assert_eq!(sets().choose(Some(&[])), Err(LanguageError::Empty));
        assert_eq!(
            sets().choose(Some(&req(&["eng", "kor", "xx"]))),
            Err(LanguageError::Unsupported(req(&["kor", "xx"])))
        );
    }

    #[test]
    fn codes_read_by_different_recognisers_only_are_an_error() {
        let s = LanguageSets::new(vec![req(&["eng"]), req(&["jpn"])]);
        assert_eq!(s.choose(Some(&req(&["eng", "jpn"]))), Err(LanguageError::NoCommonRecogniser(req(&["eng", "jpn"]))));
    }

    #[test]
    fn supported_lists_each_code_once_in_manifest_order() {
        assert_eq!(sets().supported(), vec!["eng", "deu", "chi_sim", "jpn", "chi_tra"]);
    }

    #[test]
    fn a_language_no_model_reads_goes_to_tesseract_when_installed() {
        let tess = req(&["rus", "eng", "kor", "jpn"]);
        assert_eq!(sets().choose_reader(Some(&req(&["rus"])), &tess), Ok(crate::Reader::Tesseract(req(&["rus"]))));
        // Mixed with a language both read: Tesseract reads them all.
        assert_eq!(
            sets().choose_reader(Some(&req(&["rus", "eng"])), &tess),
            Ok(crate::Reader::Tesseract(req(&["rus", "eng"])))
        );
    }

    #[test]
    fn a_language_a_model_reads_stays_with_the_model_though_tesseract_has_it() {
        let tess = req(&["eng", "jpn"]);
        assert_eq!(sets().choose_reader(Some(&req(&["jpn"])), &tess), Ok(crate::Reader::Model(1)));
        assert_eq!(sets().choose_reader(None, &tess), Ok(crate::Reader::Model(0)));
    }

    #[test]
    fn a_language_neither_reads_is_not_installed_with_the_package_to_install() {
        let e = sets().choose_reader(Some(&req(&["rus", "heb"])), &req(&["rus"])).unwrap_err();
        assert_eq!(e, LanguageError::NotInstalled(req(&["heb"])));
        assert!(e.to_string().contains("apt-get install tesseract-ocr-heb"), "{e}");
        // Both known, but Tesseract lacks the one only a model reads.
        assert_eq!(
            sets().choose_reader(Some(&req(&["rus", "jpn"])), &req(&["rus"])),
            Err(LanguageError::NoCommonRecogniser(req(&["rus", "jpn"])))
        );
        assert_eq!(sets().choose_reader(Some(&[]), &req(&["rus"])), Err(LanguageError::Empty));
    }

    #[test]
    fn cjk_characters_are_recognised() {
        for c in ['日', 'あ', 'カ', '한', '。', '「', '：', '𠀋'] {
            assert!(is_cjk(c), "{c}");
        }
        for c in ['a', 'é', 'я', 'ا', ' ', '1'] {
            assert!(!is_cjk(c), "{c}");
        }
    }
}
