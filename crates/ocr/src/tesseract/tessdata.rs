//! Which Tesseract languages this machine has: the `*.traineddata` files of the tessdata
//! directory (Debian's `tesseract-ocr-<code>` packages put them there), found at run time so
//! that a language installed later is offered after the next worker start, with no rebuild.

use std::path::{Path, PathBuf};

/// Debian's tessdata directories, newest Tesseract first.
pub const SYSTEM_TESSDATA: [&str; 2] =
    ["/usr/share/tesseract-ocr/5/tessdata", "/usr/share/tesseract-ocr/4.00/tessdata"];

/// Traineddata that are not a language to read with: orientation and script detection, and
/// the legacy-engine-only equation model.
const NOT_LANGUAGES: [&str; 2] = ["osd", "equ"];

/// The tessdata directory: `configured` when given (the service passes `TESSDATA_PREFIX`,
/// which Tesseract 5 takes as the directory holding the traineddata), else the first of
/// [`SYSTEM_TESSDATA`] that exists.
pub fn tessdata_dir(configured: Option<&Path>) -> Option<PathBuf> {
    if let Some(dir) = configured.filter(|d| !d.as_os_str().is_empty()) {
        return Some(dir.to_owned());
    }
    SYSTEM_TESSDATA.iter().map(PathBuf::from).find(|d| d.is_dir())
}

/// The languages of `dir`, sorted: `<code>` for `<code>.traineddata` and `script/<Name>` for
/// `script/<Name>.traineddata` (Tesseract's own names, which its `-l` takes).
pub fn installed_languages(dir: &Path) -> Vec<String> {
    let list = |dir: &Path, prefix: &str| -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
        entries
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().to_str().and_then(|n| n.strip_suffix(".traineddata")).map(str::to_owned))
            .filter(|code| !NOT_LANGUAGES.contains(&code.as_str()) && is_plain_name(code))
            .map(|code| format!("{prefix}{code}"))
            .collect()
    };
    let mut out = list(dir, "");
    out.extend(list(&dir.join("script"), "script/"));
    out.sort();
    out
}

/// Whether orientation and script detection can run (`osd.traineddata` is installed).
pub fn has_osd(dir: &Path) -> bool {
    dir.join("osd.traineddata").is_file()
}

/// Letters, digits and `_` only: a name that cannot leave the directory or smuggle a `+`
/// (Tesseract's separator between languages) into the language string.
fn is_plain_name(code: &str) -> bool {
    !code.is_empty() && code.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// How to install a language that is missing: the Debian package that holds it.
pub fn install_hint(code: &str) -> String {
    match code.strip_prefix("script/") {
        Some(name) => format!(
            "install the Debian package tesseract-ocr-script-<iso15924> that holds script/{name}.traineddata \
             (e.g. tesseract-ocr-script-cyrl for script/Cyrillic), or add it to OCR_EXTRA_LANGUAGES and run scripts/setup.sh"
        ),
        None => format!(
            "apt-get install tesseract-ocr-{}, or add {code} to OCR_EXTRA_LANGUAGES and run scripts/setup.sh",
            code.to_lowercase().replace('_', "-")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("docproc-tessdata-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("script")).unwrap();
        dir
    }

    #[test]
    fn languages_are_the_traineddata_files_and_scripts_without_osd() {
        let dir = scratch("list");
        for f in [
            "rus.traineddata",
            "chi_sim.traineddata",
            "osd.traineddata",
            "equ.traineddata",
            "pdf.ttf",
            "script/Cyrillic.traineddata",
        ] {
            std::fs::write(dir.join(f), b"").unwrap();
        }
        assert_eq!(installed_languages(&dir), vec!["chi_sim", "rus", "script/Cyrillic"]);
        assert!(has_osd(&dir));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_name_that_could_join_or_escape_languages_is_not_offered() {
        let dir = scratch("names");
        for f in ["a+b.traineddata", "..traineddata", "ok.traineddata"] {
            std::fs::write(dir.join(f), b"").unwrap();
        }
        assert_eq!(installed_languages(&dir), vec!["ok"]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_install_hint_names_the_debian_package() {
        assert!(install_hint("chi_tra").starts_with("apt-get install tesseract-ocr-chi-tra"));
        assert!(install_hint("script/Arabic").contains("tesseract-ocr-script-"));
        assert!(install_hint("kor").contains("OCR_EXTRA_LANGUAGES"));
    }
}
