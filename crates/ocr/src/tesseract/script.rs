//! Which reader a page of unknown language gets from its detected script (Tesseract OSD): the
//! scripts the default ONNX recogniser reads keep it; Japanese goes to the ONNX recogniser
//! that reads kana; any other script goes to Tesseract with that script's traineddata.

/// Script confidence (Tesseract OSD's scale: how far the best script's score is ahead of the
/// next one's) from which the verdict counts as sure. On the script-family test pages a full
/// paragraph scored 0.70 (Hebrew) and 0.74 (Korean) to 32 (Cyrillic); a Thai page, which OSD
/// does not know, 0 (as Latin).
pub const SCRIPT_SURE_FROM: f32 = 0.5;

/// Scripts the default recogniser reads (PP-OCRv6 tiny: Latin and simplified Chinese).
const DEFAULT_SCRIPTS: [&str; 2] = ["Latin", "Han"];

/// The Tesseract language of each script when its `script/<Name>` model is not installed.
const SCRIPT_LANGUAGE: [(&str, &str); 24] = [
    ("Cyrillic", "rus"),
    ("Greek", "ell"),
    ("Arabic", "ara"),
    ("Hebrew", "heb"),
    ("Devanagari", "hin"),
    ("Bengali", "ben"),
    ("Gurmukhi", "pan"),
    ("Gujarati", "guj"),
    ("Oriya", "ori"),
    ("Tamil", "tam"),
    ("Telugu", "tel"),
    ("Kannada", "kan"),
    ("Malayalam", "mal"),
    ("Sinhala", "sin"),
    ("Thai", "tha"),
    ("Lao", "lao"),
    ("Khmer", "khm"),
    ("Myanmar", "mya"),
    ("Tibetan", "bod"),
    ("Georgian", "kat"),
    ("Armenian", "hye"),
    ("Ethiopic", "amh"),
    // OSD names Korean pages (Hangul with Han) `Korean`.
    ("Hangul", "kor"),
    ("Korean", "kor"),
];

/// The script of each Tesseract language written in one other than Latin (OSD's names), for
/// [`super::layout_for`]; a `script/<Name>` model is of script `<Name>`.
const LANGUAGE_SCRIPT: [(&str, &str); 38] = [
    ("rus", "Cyrillic"),
    ("ukr", "Cyrillic"),
    ("bel", "Cyrillic"),
    ("bul", "Cyrillic"),
    ("srp", "Cyrillic"),
    ("mkd", "Cyrillic"),
    ("kaz", "Cyrillic"),
    ("kir", "Cyrillic"),
    ("mon", "Cyrillic"),
    ("tgk", "Cyrillic"),
    ("ell", "Greek"),
    ("grc", "Greek"),
    ("ara", "Arabic"),
    ("fas", "Arabic"),
    ("urd", "Arabic"),
    ("pus", "Arabic"),
    ("uig", "Arabic"),
    ("heb", "Hebrew"),
    ("yid", "Hebrew"),
    ("hin", "Devanagari"),
    ("mar", "Devanagari"),
    ("nep", "Devanagari"),
    ("san", "Devanagari"),
    ("ben", "Bengali"),
    ("asm", "Bengali"),
    ("pan", "Gurmukhi"),
    ("guj", "Gujarati"),
    ("ori", "Oriya"),
    ("tam", "Tamil"),
    ("tel", "Telugu"),
    ("kan", "Kannada"),
    ("mal", "Malayalam"),
    ("sin", "Sinhala"),
    ("tha", "Thai"),
    ("lao", "Lao"),
    ("khm", "Khmer"),
    ("mya", "Myanmar"),
    ("kor", "Hangul"),
];

/// The script `language` (a Tesseract code or `script/<Name>`) is written in, when it is one of
/// [`LANGUAGE_SCRIPT`] or a script model; `None` for the others (Latin, CJK and the rest).
pub fn script_of_language(language: &str) -> Option<&str> {
    if let Some(name) = language.strip_prefix("script/") {
        return Some(name);
    }
    LANGUAGE_SCRIPT.iter().find(|(code, _)| *code == language).map(|(_, script)| *script)
}

/// What a detected script asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScriptReader {
    /// The default recogniser (the script is one it reads, or nothing better is installed).
    Default,
    /// These language codes (`jpn`, or Tesseract traineddata such as `rus` or `script/Arabic`).
    Languages(Vec<String>),
}

/// The reader for `script` given Tesseract's installed languages: Latin and Han the default;
/// Japanese (OSD says `Japanese`, `Hiragana` or `Katakana`) `jpn`; another script its
/// `script/<Name>` model when installed, else its main language when installed, else the
/// default.
pub fn reader_for_script(script: &str, installed: &[String]) -> ScriptReader {
    if DEFAULT_SCRIPTS.contains(&script) {
        return ScriptReader::Default;
    }
    if matches!(script, "Japanese" | "Hiragana" | "Katakana") {
        return ScriptReader::Languages(vec!["jpn".into()]);
    }
    let whole = format!("script/{script}");
    if installed.contains(&whole) {
        return ScriptReader::Languages(vec![whole]);
    }
    SCRIPT_LANGUAGE
        .iter()
        .find(|(s, code)| *s == script && installed.iter().any(|i| i == code))
        .map_or(ScriptReader::Default, |(_, code)| ScriptReader::Languages(vec![code.to_string()]))
}

/// Whether the read of a page by its detected script's reader replaces the default
/// recogniser's: always on a sure verdict (`script_confidence` from [`SCRIPT_SURE_FROM`]); on
/// an unsure one (a guess, as on a page of text in mixed orientations) only when the guessed
/// reader read the page more confidently than the default one (mean character confidences).
pub fn guess_replaces_default(script_confidence: f32, default_confidence: f32, guessed_confidence: f32) -> bool {
    script_confidence >= SCRIPT_SURE_FROM || guessed_confidence > default_confidence
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unsure_script_verdict_replaces_the_default_read_only_when_read_more_confidently() {
        // A Latin page of mixed orientations that OSD took for Cyrillic (confidence 0.28).
        assert!(!guess_replaces_default(0.28, 0.71, 0.52));
        assert!(guess_replaces_default(0.28, 0.55, 0.9));
        // A sure verdict is followed whatever the confidences.
        assert!(guess_replaces_default(0.7, 0.8, 0.6));
    }

    fn installed(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn latin_and_han_keep_the_default_recogniser() {
        let i = installed(&["eng", "rus", "chi_sim"]);
        assert_eq!(reader_for_script("Latin", &i), ScriptReader::Default);
        assert_eq!(reader_for_script("Han", &i), ScriptReader::Default);
    }

    #[test]
    fn japanese_goes_to_the_recogniser_that_reads_kana() {
        assert_eq!(reader_for_script("Katakana", &[]), ScriptReader::Languages(vec!["jpn".into()]));
    }

    #[test]
    fn a_script_model_is_preferred_to_one_language_of_the_script() {
        let i = installed(&["rus", "script/Cyrillic"]);
        assert_eq!(reader_for_script("Cyrillic", &i), ScriptReader::Languages(vec!["script/Cyrillic".into()]));
        assert_eq!(reader_for_script("Cyrillic", &installed(&["rus"])), ScriptReader::Languages(vec!["rus".into()]));
        assert_eq!(reader_for_script("Hangul", &installed(&["kor"])), ScriptReader::Languages(vec!["kor".into()]));
    }

    #[test]
    fn a_language_and_a_script_model_name_their_script() {
        assert_eq!(script_of_language("ukr"), Some("Cyrillic"));
        assert_eq!(script_of_language("kor"), Some("Hangul"));
        assert_eq!(script_of_language("script/Devanagari"), Some("Devanagari"));
        assert_eq!(script_of_language("vie"), None);
    }

    #[test]
    fn a_script_with_nothing_installed_falls_back_to_the_default() {
        assert_eq!(reader_for_script("Arabic", &installed(&["rus"])), ScriptReader::Default);
        assert_eq!(reader_for_script("Fraktur", &installed(&["rus"])), ScriptReader::Default);
    }
}
