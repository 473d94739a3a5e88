//! Test pages in the script families Tesseract reads for us (Cyrillic, Greek, Arabic, Hebrew,
//! Devanagari, Thai, Hangul), shared by the ocr and engine tests (`#[path]`): real text in each
//! language (Articles 1 and 3 of the Universal Declaration of Human Rights) set in a Noto font
//! by headless Chromium (HarfBuzz shaping, the bidi algorithm) and rasterised in grey by
//! pdftoppm, so a page has no text layer and its known text is the reference.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// One test page: its Tesseract language, font, direction and text.
pub struct ScriptPage {
    /// Script family (test names and messages).
    pub family: &'static str,
    /// Tesseract language code.
    pub language: &'static str,
    /// Script name as Tesseract's OSD gives it.
    pub osd_script: &'static str,
    /// Font family (fonts-noto-core, fonts-noto-cjk).
    pub font: &'static str,
    /// Right to left.
    pub rtl: bool,
    /// The text, in logical order.
    pub text: &'static str,
}

pub const CYRILLIC: ScriptPage = ScriptPage {
    family: "Cyrillic",
    language: "rus",
    osd_script: "Cyrillic",
    font: "Noto Serif",
    rtl: false,
    text: "Все люди рождаются свободными и равными в своем достоинстве и правах. Они наделены разумом и совестью и должны поступать в отношении друг друга в духе братства. Каждый человек имеет право на жизнь, на свободу и на личную неприкосновенность.",
};
pub const GREEK: ScriptPage = ScriptPage {
    family: "Greek",
    language: "ell",
    osd_script: "Greek",
    font: "Noto Serif",
    rtl: false,
    text: "Όλοι οι άνθρωποι γεννιούνται ελεύθεροι και ίσοι στην αξιοπρέπεια και τα δικαιώματα. Είναι προικισμένοι με λογική και συνείδηση, και οφείλουν να συμπεριφέρονται μεταξύ τους με πνεύμα αδελφοσύνης.",
};
pub const ARABIC: ScriptPage = ScriptPage {
    family: "Arabic",
    language: "ara",
    osd_script: "Arabic",
    font: "Noto Naskh Arabic",
    rtl: true,
    text: "يولد جميع الناس أحرارا متساوين في الكرامة والحقوق. وقد وهبوا عقلا وضميرا وعليهم أن يعامل بعضهم بعضا بروح الإخاء. لكل فرد الحق في الحياة والحرية وسلامة شخصه.",
};
pub const HEBREW: ScriptPage = ScriptPage {
    family: "Hebrew",
    language: "heb",
    osd_script: "Hebrew",
    font: "Noto Sans Hebrew",
    rtl: true,
    text: "כל בני האדם נולדו בני חורין ושווים בערכם ובזכויותיהם. כולם חוננו בתבונה ובמצפון, לפיכך חובה עליהם לנהוג איש ברעהו ברוח של אחווה. כל אדם יש לו הזכות לחיים, לחירות ולביטחון אישי.",
};
pub const DEVANAGARI: ScriptPage = ScriptPage {
    family: "Devanagari",
    language: "hin",
    osd_script: "Devanagari",
    font: "Noto Sans Devanagari",
    rtl: false,
    text: "सभी मनुष्यों को गौरव और अधिकारों के मामले में जन्मजात स्वतन्त्रता और समानता प्राप्त है। उन्हें बुद्धि और अन्तरात्मा की देन प्राप्त है और परस्पर उन्हें भाईचारे के भाव से बर्ताव करना चाहिए।",
};
pub const THAI: ScriptPage = ScriptPage {
    family: "Thai",
    language: "tha",
    osd_script: "Thai",
    font: "Noto Sans Thai",
    rtl: false,
    text: "มนุษย์ทั้งหลายเกิดมามีอิสระและเสมอภาคกันในเกียรติศักดิ์และสิทธิ ต่างมีเหตุผลและมโนธรรม และควรปฏิบัติต่อกันด้วยเจตนารมณ์แห่งภราดรภาพ",
};
pub const HANGUL: ScriptPage = ScriptPage {
    family: "Hangul",
    language: "kor",
    osd_script: "Korean",
    font: "Noto Sans CJK KR",
    rtl: false,
    text: "모든 인간은 태어날 때부터 자유로우며 그 존엄과 권리에 있어 동등하다. 인간은 천부적으로 이성과 양심을 부여받았으며 서로 형제애의 정신으로 행동하여야 한다.",
};

/// Every family.
pub const ALL: [&ScriptPage; 7] = [&CYRILLIC, &GREEK, &ARABIC, &HEBREW, &DEVANAGARI, &THAI, &HANGUL];

fn tool(name: &str) -> Command {
    let found =
        std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()));
    assert!(found, "{name} is not installed (scripts/setup-test.sh installs it): this test renders its pages with it");
    Command::new(name)
}

/// Renders `page` at 16 pt on A4 into `dir` as a grey PNG at `dpi`, turned clockwise by
/// `turn` degrees (0, 90, 180, 270); returns its path.
pub fn render(dir: &Path, page: &ScriptPage, dpi: u32, turn: u32) -> PathBuf {
    let name = format!("{}-{dpi}-{turn}", page.language);
    let html = dir.join(format!("{name}.html"));
    let dir_attr = if page.rtl { " dir=rtl" } else { "" };
    std::fs::write(
        &html,
        format!(
            "<!doctype html><meta charset=utf-8><style>@page{{size:A4;margin:25mm}}body{{font:16pt/1.6 '{}'}}</style><p{dir_attr}>{}</p>",
            page.font, page.text
        ),
    )
    .unwrap();
    let pdf = dir.join(format!("{name}.pdf"));
    let out = tool("chromium")
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer"])
        .arg(format!("--user-data-dir={}", dir.join("chromium-profile").display()))
        .arg(format!("--print-to-pdf={}", pdf.display()))
        .arg(&html)
        .output()
        .expect("chromium runs");
    assert!(pdf.exists(), "chromium printed no PDF: {}", String::from_utf8_lossy(&out.stderr));
    let stem = dir.join(&name);
    let mut cmd = tool("pdftoppm");
    cmd.args(["-r", &dpi.to_string(), "-gray", "-png", "-singlefile", "-f", "1", "-l", "1"]);
    if turn != 0 {
        // pdftoppm has no rotation of its own; the page is turned in the PDF's /Rotate.
        let turned = dir.join(format!("{name}-turned.pdf"));
        let st = tool("qpdf").arg(format!("--rotate=+{turn}:1")).arg(&pdf).arg(&turned).status().expect("qpdf runs");
        assert!(st.success(), "qpdf could not turn the page");
        cmd.arg(&turned);
    } else {
        cmd.arg(&pdf);
    }
    let st = cmd.arg(&stem).status().expect("pdftoppm runs");
    assert!(st.success());
    stem.with_extension("png")
}

/// Text with the bidi control characters poppler wraps right-to-left lines in removed and
/// every run of whitespace one space.
pub fn normalise(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(*c as u32, 0x200E | 0x200F | 0x202A..=0x202E | 0x2066..=0x2069))
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Character error rate of `read` against `reference` (both [`normalise`]d; line breaks are
/// spaces, so a spurious space counts as an error and a missing one too).
pub fn cer(reference: &str, read: &str) -> f64 {
    let r: Vec<char> = normalise(reference).chars().collect();
    let h: Vec<char> = normalise(read).chars().collect();
    strsim::generic_levenshtein(&r, &h) as f64 / r.len().max(1) as f64
}

/// Spaces in `text` after [`normalise`] (line breaks count as spaces).
pub fn spaces(text: &str) -> usize {
    normalise(text).matches(' ').count()
}
