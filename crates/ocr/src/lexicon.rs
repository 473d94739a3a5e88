//! Word correction against a language's Hunspell dictionary, for requests that name their
//! languages (and, from the recogniser's runner-ups alone, for English pages read without
//! them: [`correct_unnamed_page`]): a recognised word the dictionary does not know is
//! replaced by the one word it knows that differs only in letters the recogniser confuses
//! or nearly read ([`Lexicon::correct`]).
//!
//! The recognisers read the rarer diacritics of many Latin-script languages as a sibling
//! letter (German `Uber` for `Über`, Czech `žlutoučký` for `žluťoučký`, Latvian `rūkīši` for
//! `rūķīši`, Lithuanian `teisèmis` for `teisėmis`, Icelandic `beim` for `þeim`), where
//! Tesseract's language model keeps it from such non-words. Here, as there, a dictionary
//! decides: the candidates of a word the dictionary rejects are the words made by replacing
//! one of its letters with a letter of the language's alphabet (the dictionary's TRY
//! letters) that shares its base letter (`u` -> `ü`, `ġ` -> `ģ`, `è` -> `ė`), or with a
//! letter it is known to be read as (`b`/`p` -> `þ`, `i` -> `ı`, `d’` -> `ď`); the word is
//! replaced only when exactly one candidate is a dictionary word. (Two replacements a word
//! cost up to 40 ms of lookups on Czech and fixed nothing more on the language pages.)
//! Words with digits, and words the dictionary knows, are never touched.
//!
//! The dictionaries are Debian's `hunspell-<lang>` packages (`/usr/share/hunspell`, or
//! `HUNSPELL_DIR`), read by the `spellbook` crate; a language without an installed or
//! readable dictionary is read as before. Each is loaded at its first use; a process keeps
//! the four most recently used.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use unicode_normalization::UnicodeNormalization;

use crate::{Alternative, Block, PageText};

/// Hunspell dictionary file stems for the Tesseract-style codes that have a Debian package.
const DICTIONARIES: &[(&str, &str)] = &[
    ("afr", "af_ZA"),
    ("bos", "bs_BA"),
    ("cat", "ca_ES"),
    ("ces", "cs_CZ"),
    ("dan", "da_DK"),
    ("deu", "de_DE"),
    ("eng", "en_US"),
    ("eus", "eu_ES"),
    ("fra", "fr_FR"),
    ("glg", "gl_ES"),
    ("hrv", "hr_HR"),
    ("hun", "hu_HU"),
    ("ind", "id_ID"),
    ("isl", "is_IS"),
    ("ita", "it_IT"),
    ("lav", "lv_LV"),
    ("lit", "lt_LT"),
    ("nld", "nl_NL"),
    ("nor", "nb_NO"),
    ("pol", "pl_PL"),
    ("por", "pt_PT"),
    ("slv", "sl_SI"),
    ("spa", "es_ES"),
    ("swa", "sw_TZ"),
    ("swe", "sv_SE"),
    ("tur", "tr_TR"),
];

/// Letters a recogniser reads in place of another that is not its accented sibling:
/// (read, meant). Used only where `meant` is a letter of the language.
const MISREADS: &[(&str, &str)] = &[
    ("b", "þ"),
    ("p", "þ"),
    ("B", "Þ"),
    ("P", "Þ"),
    ("i", "ı"),
    ("ı", "i"),
    ("d’", "ď"),
    ("d'", "ď"),
    ("t’", "ť"),
    ("t'", "ť"),
    ("l’", "ľ"),
    ("l'", "ľ"),
];

/// Longest word (in characters) that is checked; longer tokens are left alone.
const MAX_WORD: usize = 40;

/// One language's dictionary and the replacements its words are tried with.
pub struct Lexicon {
    dict: spellbook::Dictionary,
    /// The language's letters by base letter (`u` -> `u`, `ü`, `ú`...).
    by_base: HashMap<char, Vec<char>>,
    /// Sequences read for a letter of the language that is not their sibling: (read, meant).
    misreads: Vec<(&'static str, &'static str)>,
}

impl Lexicon {
    /// Builds a lexicon from a Hunspell `.aff` and `.dic` in UTF-8.
    pub fn new(aff: &str, dic: &str) -> Result<Lexicon, String> {
        let dict = spellbook::Dictionary::new(aff, dic).map_err(|e| e.to_string())?;
        let letters: Vec<char> = aff
            .lines()
            .find_map(|l| l.strip_prefix("TRY "))
            .unwrap_or("")
            .chars()
            .filter(|c| c.is_alphabetic())
            .flat_map(|c| [c].into_iter().chain(c.to_uppercase()).chain(c.to_lowercase()))
            .collect();
        let mut by_base: HashMap<char, Vec<char>> = HashMap::new();
        for &letter in &letters {
            let same = by_base.entry(base_letter(letter)).or_default();
            if !same.contains(&letter) {
                same.push(letter);
            }
        }
        let misreads =
            MISREADS.iter().copied().filter(|(_, meant)| meant.chars().all(|m| letters.contains(&m))).collect();
        Ok(Lexicon { dict, by_base, misreads })
    }

    /// Reads the Hunspell dictionary `stem` (`de_DE`) from `dir`, converting it from the
    /// encoding its `SET` line names.
    pub fn load(dir: &Path, stem: &str) -> Result<Lexicon, String> {
        let read =
            |ext: &str| std::fs::read(dir.join(format!("{stem}.{ext}"))).map_err(|e| format!("{stem}.{ext}: {e}"));
        let (aff, dic) = (read("aff")?, read("dic")?);
        let label = String::from_utf8_lossy(&aff)
            .lines()
            .find_map(|l| l.strip_prefix("SET ").map(|s| s.trim().to_ascii_lowercase()))
            .unwrap_or_else(|| "iso-8859-1".into());
        // Hunspell writes ISO8859-13; the WHATWG names have a dash.
        let label = label.replace("iso8859", "iso-8859");
        let encoding = encoding_rs::Encoding::for_label(label.as_bytes()).unwrap_or(encoding_rs::UTF_8);
        let decode = |b: &[u8]| encoding.decode_without_bom_handling(b).0.into_owned();
        let aff: String = decode(&aff)
            .lines()
            .map(|l| if l.starts_with("SET ") { "SET UTF-8" } else { l })
            .collect::<Vec<_>>()
            .join("\n");
        let dic = decode(&dic);
        match shift_numeric_flags(&aff, &dic) {
            Some((aff, dic)) => Lexicon::new(&aff, &dic),
            None => Lexicon::new(&aff, &dic),
        }
    }

    /// True when the dictionary knows `word`.
    pub fn knows(&self, word: &str) -> bool {
        self.dict.check(word)
    }

    /// The correction of one whitespace-free token (punctuation around it kept), `None`
    /// when it stays as it is. `alternatives` are the recogniser's runner-ups for some of
    /// its characters ([`crate::Word::alternatives`]).
    ///
    /// A word the dictionary does not know becomes the one candidate it knows: first among
    /// the language's diacritic variants (`variants`); when two or more of those are words,
    /// the one the recogniser's runner-up also reads (Hungarian `tüző`: `túző` and `tűző`);
    /// when none is, the word with one letter replaced by its runner-up (`inch[l]uding`,
    /// `you’I[l]l` on the LinnSequencer scan).
    pub fn correct(&self, token: &str, alternatives: &[Alternative]) -> Option<String> {
        self.corrected(token, alternatives, true)
    }

    /// [`correct`](Self::correct) from the runner-ups alone (no diacritic variants: a page
    /// read without `languages`, whose loan words keep their marks, `naïve`).
    pub fn correct_from_runner_ups(&self, token: &str, alternatives: &[Alternative]) -> Option<String> {
        self.corrected(token, alternatives, false)
    }

    fn corrected(&self, token: &str, alternatives: &[Alternative], variants: bool) -> Option<String> {
        let (start, end) = letters_of(token)?;
        let core = &token[start..end];
        if core.chars().count() > MAX_WORD || token.chars().any(|c| c.is_numeric()) || self.knows(core) {
            return None;
        }
        let mut found: Vec<String> = Vec::new();
        for one in if variants { self.variants(core) } else { Vec::new() } {
            if self.knows(&one) {
                push_unique(&mut found, format!("{}{one}{}", &token[..start], &token[end..]));
            }
        }
        let mut nearly: Vec<String> = Vec::new();
        for one in runner_up_reads(token, alternatives) {
            if letters_of(&one).is_some_and(|(a, b)| self.knows(&one[a..b])) {
                push_unique(&mut nearly, one);
            }
        }
        let chosen: Vec<&String> = match found.len() {
            0 => nearly.iter().collect(),
            1 => found.iter().collect(),
            _ => found.iter().filter(|f| nearly.contains(f)).collect(),
        };
        match chosen.as_slice() {
            [only] => Some((*only).clone()),
            _ => None,
        }
    }

    /// `word` with one replacement: a letter replaced by another letter of the language
    /// with the same base letter (a letter read that is no letter of the language included:
    /// `ġ` -> `ģ`), or a misread.
    fn variants(&self, word: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut push = |i: usize, len: usize, meant: &str| {
            out.push(format!("{}{meant}{}", &word[..i], &word[i + len..]));
        };
        for (i, c) in word.char_indices() {
            for &letter in self.by_base.get(&base_letter(c)).into_iter().flatten() {
                if letter != c {
                    push(i, c.len_utf8(), letter.encode_utf8(&mut [0; 4]));
                }
            }
            for (read, meant) in &self.misreads {
                if word[i..].starts_with(read) {
                    push(i, read.len(), meant);
                }
            }
        }
        out
    }
}

/// Byte range of `token` from its first letter to the end of its last.
fn letters_of(token: &str) -> Option<(usize, usize)> {
    let start = token.find(|c: char| c.is_alphabetic())?;
    let end = token.char_indices().rev().find(|(_, c)| c.is_alphabetic()).map(|(i, c)| i + c.len_utf8())?;
    Some((start, end))
}

/// `token` with one letter replaced by its runner-up, for each runner-up that is a letter
/// read in place of a letter still there, and not that letter without its mark: a mark the
/// recogniser wrote was seen, and dictionaries lack loan words' marks (`naïve` read right
/// became `naive` against `en_US`, which has no `naïve`).
fn runner_up_reads(token: &str, alternatives: &[Alternative]) -> Vec<String> {
    let chars: Vec<char> = token.chars().collect();
    alternatives
        .iter()
        .filter(|a| a.read.is_alphabetic() && a.instead.is_alphabetic() && chars.get(a.at) == Some(&a.read))
        .filter(|a| base_letter(a.read) != a.instead)
        .map(|a| chars.iter().enumerate().map(|(i, &c)| if i == a.at { a.instead } else { c }).collect())
        .collect()
}

/// The letter without its diacritics (`ű` -> `u`, `ġ` -> `g`); itself when it has none.
/// Directives whose one argument is a flag.
const FLAG_DIRECTIVES: &[&str] = &[
    "COMPOUNDFLAG",
    "COMPOUNDBEGIN",
    "COMPOUNDMIDDLE",
    "COMPOUNDLAST",
    "COMPOUNDEND",
    "ONLYINCOMPOUND",
    "COMPOUNDPERMITFLAG",
    "COMPOUNDFORBIDFLAG",
    "COMPOUNDROOT",
    "NEEDAFFIX",
    "KEEPCASE",
    "FORBIDDENWORD",
    "CIRCUMFIX",
    "NOSUGGEST",
    "FORCEUCASE",
    "WARN",
    "SUBSTANDARD",
    "LEMMA_PRESENT",
];

/// A dictionary with numeric flags (`FLAG num`) that uses flag 0, which Hunspell accepts
/// and spellbook refuses (Debian's Turkish: `SFX 0 ...`, `ab/0,2,3`), with every flag
/// moved up by one in both files; `None` for any other dictionary (or one with `AF`
/// aliases, whose numbers in the .dic are alias indices, not flags).
fn shift_numeric_flags(aff: &str, dic: &str) -> Option<(String, String)> {
    let directive = |l: &str, name: &str| l.split_whitespace().next() == Some(name);
    if !aff.lines().any(|l| directive(l, "FLAG") && l.split_whitespace().nth(1) == Some("num"))
        || aff.lines().any(|l| directive(l, "AF"))
    {
        return None;
    }
    let shift_list = |flags: &str| -> String {
        flags
            .split(',')
            .map(|f| f.trim().parse::<u32>().map_or_else(|_| f.to_owned(), |n| (n + 1).to_string()))
            .collect::<Vec<_>>()
            .join(",")
    };
    let shift_affix = |field: &str| match field.split_once('/') {
        Some((text, flags)) => format!("{text}/{}", shift_list(flags)),
        None => field.to_owned(),
    };
    let aff = aff
        .lines()
        .map(|l| {
            let mut t: Vec<String> = l.split_whitespace().map(str::to_owned).collect();
            match t.first().map(String::as_str) {
                Some("SFX" | "PFX") if t.len() >= 3 => {
                    t[1] = shift_list(&t[1]);
                    // A rule line (not the header `SFX flag Y count`): its affix's
                    // continuation flags.
                    if t.len() >= 4 {
                        t[3] = shift_affix(&t[3]);
                    }
                    t.join(" ")
                }
                Some(d) if FLAG_DIRECTIVES.contains(&d) && t.len() >= 2 => {
                    t[1] = shift_list(&t[1]);
                    t.join(" ")
                }
                _ => l.to_owned(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let dic = dic
        .lines()
        .enumerate()
        .map(|(i, l)| {
            // The first line is the word count; a word's flags follow its first
            // unescaped `/` and end at whitespace (morphological fields follow).
            let bytes = l.as_bytes();
            let slash = (0..bytes.len()).find(|&k| bytes[k] == b'/' && (k == 0 || bytes[k - 1] != b'\\'));
            match slash {
                Some(k) if i > 0 && k > 0 => {
                    let rest = &l[k + 1..];
                    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                    format!("{}/{}{}", &l[..k], shift_list(&rest[..end]), &rest[end..])
                }
                _ => l.to_owned(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    Some((aff, dic))
}

fn base_letter(c: char) -> char {
    c.nfd().next().unwrap_or(c)
}

fn push_unique(v: &mut Vec<String>, s: String) {
    if !v.contains(&s) {
        v.push(s);
    }
}

/// Where the dictionaries are: `HUNSPELL_DIR`, else Debian's `/usr/share/hunspell`.
pub fn dictionary_dir() -> PathBuf {
    std::env::var_os("HUNSPELL_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/usr/share/hunspell"))
}

/// Lexicons a process keeps loaded (a dictionary takes 5-40 MB; a worker that read pages
/// of every language held 25 of them, 200 MB more).
const KEPT: usize = 4;

/// The lexicon of a Tesseract-style code, loaded at its first use and kept among the
/// `KEPT` (4) most recently used; `None` when the language has no dictionary here (not
/// packaged, not installed, or not readable).
pub fn for_language(code: &str) -> Option<Arc<Lexicon>> {
    /// (code, lexicon or `None` for a dictionary that would not load), oldest use first.
    type Loaded = Vec<(String, Option<Arc<Lexicon>>)>;
    static CACHE: OnceLock<Mutex<Loaded>> = OnceLock::new();
    let stem = DICTIONARIES.iter().find(|(c, _)| *c == code)?.1;
    let mut cache = CACHE.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    let entry = match cache.iter().position(|(c, _)| c == code) {
        Some(i) => cache.remove(i),
        None => (code.to_owned(), Lexicon::load(&dictionary_dir(), stem).ok().map(Arc::new)),
    };
    let lexicon = entry.1.clone();
    cache.push(entry);
    if cache.len() > KEPT {
        cache.remove(0);
    }
    lexicon
}

/// Corrects the words of `page` against the lexicons of `languages` (a word one of them
/// knows is kept; a correction needs the first lexicon that has one) and rebuilds the
/// lines' text. Returns how many words changed. Nothing is corrected unless every
/// language has a lexicon: a word of a language without one would be taken for a
/// misread word of another (English `the` became French `thé` on Tesseract's eurotext
/// page when English had no dictionary).
pub fn correct_page(page: &mut PageText, languages: &[String]) -> usize {
    let Some(lexicons) = languages.iter().map(|c| for_language(c)).collect::<Option<Vec<Arc<Lexicon>>>>() else {
        return 0;
    };
    correct_with(page, &lexicons, true)
}

/// Share of a page's words (of three letters or more) English must know before a page
/// read without `languages` is corrected against it...
pub const ENGLISH_PAGE_SHARE: f32 = 0.8;
/// ...and the fewest such words that test needs.
pub const ENGLISH_PAGE_MIN_WORDS: usize = 20;

/// Corrects a page read without `languages` against English when it is English (at least
/// [`ENGLISH_PAGE_SHARE`] of its words known to the English dictionary, and at least
/// [`ENGLISH_PAGE_MIN_WORDS`] words), and only from the recogniser's runner-ups (English
/// has no diacritic variants). Returns how many words changed.
///
/// Why: a scan of an English brochure read `inchuding` and `you’Il` with `l` as the
/// runner-up in both; the service reads most pages without `languages`, and Tesseract's
/// default is English too. A page in another language rarely passes the test; where it
/// does, only a word English does not know, whose runner-up makes an English word, changes.
pub fn correct_unnamed_page(page: &mut PageText) -> usize {
    let words: Vec<&str> = page
        .blocks
        .iter()
        .flat_map(|b| &b.lines)
        .flat_map(|l| &l.words)
        .filter_map(|w| letters_of(&w.text).map(|(a, b)| &w.text[a..b]))
        .filter(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 3)
        .collect();
    if words.len() < ENGLISH_PAGE_MIN_WORDS {
        return 0;
    }
    let Some(english) = for_language("eng") else {
        return 0;
    };
    let known = words.iter().filter(|w| english.knows(w)).count();
    if (known as f32) < ENGLISH_PAGE_SHARE * words.len() as f32 {
        return 0;
    }
    correct_with(page, &[english], false)
}

/// Runner-up probability from which a line-final hyphen becomes the dash it nearly was.
pub const DASH_RUNNER_UP: f32 = 0.2;

/// [`correct_page`] with the lexicons loaded; also turns a line-final hyphen into the dash
/// the recogniser nearly read ([`DASH_RUNNER_UP`]) when the word before it is a word and its
/// join with the next line's first word is none (`sequence-` / `when`: pdftotext, and any
/// reader that mends hyphenation, would make it `sequencewhen`). `variants`: diacritic
/// variants are tried too (not on pages read without `languages`).
fn correct_with(page: &mut PageText, lexicons: &[Arc<Lexicon>], variants: bool) -> usize {
    if lexicons.is_empty() {
        return 0;
    }
    let knows = |w: &str| lexicons.iter().any(|l| l.knows(w));
    let mut changed = 0;
    for Block { lines, .. } in &mut page.blocks {
        for k in 0..lines.len() {
            let next_first: Option<String> = lines.get(k + 1).and_then(|l| l.words.first()).map(|w| w.text.clone());
            let line = &mut lines[k];
            let mut any = false;
            for word in &mut line.words {
                if knows(word.text.trim_matches(|c: char| !c.is_alphabetic())) {
                    continue;
                }
                if let Some(fixed) = lexicons.iter().find_map(|l| l.corrected(&word.text, &word.alternatives, variants))
                {
                    word.text = fixed;
                    any = true;
                    changed += 1;
                }
            }
            if let Some(word) = line.words.last_mut() {
                if let Some(dash) = line_end_dash(word, next_first.as_deref(), &knows) {
                    word.text.pop();
                    word.text.push(dash);
                    any = true;
                    changed += 1;
                }
            }
            if any {
                line.text = line.words.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ");
            }
        }
    }
    changed
}

/// The dash a line's last word ending in `-` should end in instead (see [`correct_with`]).
fn line_end_dash(word: &crate::Word, next: Option<&str>, knows: &dyn Fn(&str) -> bool) -> Option<char> {
    let stem = word.text.strip_suffix('-')?;
    let at = stem.chars().count();
    let dash = word
        .alternatives
        .iter()
        .find(|a| a.at == at && a.read == '-' && matches!(a.instead, '—' | '–') && a.prob >= DASH_RUNNER_UP)?
        .instead;
    let (a, b) = letters_of(stem)?;
    if b != stem.len() || !knows(&stem[a..b]) {
        return None;
    }
    let joined = next.and_then(|n| letters_of(n).map(|(c, d)| format!("{}{}", &stem[a..b], &n[c..d])));
    if joined.is_some_and(|j| knows(&j)) {
        return None;
    }
    Some(dash)
}

#[cfg(test)]
mod tests {
    use super::{shift_numeric_flags, Lexicon};
    use crate::Alternative;

    #[test]
    fn a_dictionary_with_numeric_flag_zero_loads_with_its_flags_moved_up() {
        let aff = "SET UTF-8\nFLAG num\nTRY abcçdefgğhıijklmnoöprsştuüvyz\nSFX 0 N 1\nSFX 0 0 lar .\nSFX 1 N 1\nSFX 1 0 dan/0 .\n";
        let dic = "2\nkitap/0,1\nev/1\tpo:noun\n";
        assert!(Lexicon::new(aff, dic).is_err(), "spellbook refuses flag 0 (else this test tests nothing)");
        let (aff, dic) = shift_numeric_flags(aff, dic).expect("a FLAG num dictionary");
        assert!(aff.contains("SFX 1 0 lar .") && aff.contains("SFX 2 0 dan/1 ."), "{aff}");
        assert!(dic.contains("kitap/1,2") && dic.contains("ev/2\tpo:noun"), "{dic}");
        let l = Lexicon::new(&aff, &dic).unwrap();
        assert!(l.knows("kitap") && l.knows("kitaplar") && l.knows("evdan") && l.knows("evdanlar"));
        assert!(!l.knows("evlar"));
        assert!(shift_numeric_flags("SET UTF-8\n", "1\na/b\n").is_none());
    }

    fn lexicon(try_letters: &str, words: &[&str]) -> Lexicon {
        let aff = format!("SET UTF-8\nTRY {try_letters}\n");
        let dic = format!("{}\n{}\n", words.len(), words.join("\n"));
        Lexicon::new(&aff, &dic).unwrap()
    }

    #[test]
    fn a_word_read_without_its_diacritic_takes_the_one_dictionary_word_it_differs_from() {
        let l = lexicon("aeioulnrstäöüß", &["über", "Straße", "schön"]);
        assert_eq!(l.correct("Uber", &[]).as_deref(), Some("Über"));
        assert_eq!(l.correct("schon,", &[]).as_deref(), Some("schön,"), "punctuation around the word stays");
        assert_eq!(l.correct("über", &[]), None, "a known word stays");
        assert_eq!(l.correct("Xylophon", &[]), None, "no candidate in the dictionary: kept");
    }

    #[test]
    fn a_sibling_diacritic_is_corrected_even_when_the_letter_read_is_not_the_languages() {
        let l = lexicon("aāgģkķiīsšuūž", &["rūķīši", "ģimene"]);
        assert_eq!(l.correct("rūkīši", &[]).as_deref(), Some("rūķīši"));
        assert_eq!(l.correct("ġimene", &[]).as_deref(), Some("ģimene"), "ġ is no Latvian letter: its base g gives ģ");
        let l = lexicon("aeiouáéíóúőöüű", &["tűző", "tükör"]);
        assert_eq!(l.correct("tüző", &[]).as_deref(), Some("tűző"));
    }

    #[test]
    fn known_misreadings_apply_only_where_the_letter_belongs_to_the_language() {
        let is = lexicon("aeiouþðá", &["þeim"]);
        assert_eq!(is.correct("beim", &[]).as_deref(), Some("þeim"));
        let cs = lexicon("aeiouáéďťčř", &["ďábel"]);
        assert_eq!(cs.correct("d’ábel", &[]).as_deref(), Some("ďábel"));
        let de = lexicon("aeiouäöü", &["þeim"]);
        assert_eq!(de.correct("beim", &[]), None, "þ is no German letter");
    }

    fn runner_up(at: usize, read: char, instead: char) -> Alternative {
        Alternative { at, read, instead, prob: 0.3 }
    }

    #[test]
    fn a_word_no_variant_fixes_takes_the_one_runner_up_the_dictionary_knows() {
        let en = lexicon("esianrtolcdugmphbyfvkwz", &["including", "you'll", "inch"]);
        assert_eq!(en.correct("inchuding,", &[runner_up(3, 'h', 'l')]).as_deref(), Some("including,"));
        assert_eq!(en.correct("you'Il", &[runner_up(4, 'I', 'l')]).as_deref(), Some("you'll"));
        assert_eq!(en.correct("inchuding", &[runner_up(3, 'h', 'k')]), None, "a runner-up that makes no word");
        assert_eq!(en.correct("inchuding", &[runner_up(4, 'x', 'l')]), None, "a runner-up for another letter");
        assert_eq!(en.correct("inch", &[runner_up(0, 'i', 'o')]), None, "a known word stays");
        let en = lexicon("esianrtolcdugmphbyfvkwz", &["naive"]);
        assert_eq!(
            en.correct_from_runner_ups("naïve", &[runner_up(2, 'ï', 'i')]),
            None,
            "a mark read is not dropped, by a runner-up or a variant"
        );
        assert_eq!(en.correct_from_runner_ups("naïve", &[]), None);
        assert_eq!(en.correct("naïve", &[]).as_deref(), Some("naive"), "with variants (a named language) it is");
    }

    #[test]
    fn two_variants_in_the_dictionary_are_told_apart_by_the_runner_up() {
        let hu = lexicon("aeiouáéíóúőöüű", &["tűző", "túző"]);
        assert_eq!(hu.correct("tüző", &[]), None, "two words: not without the recogniser");
        assert_eq!(hu.correct("tüző", &[runner_up(1, 'ü', 'ű')]).as_deref(), Some("tűző"));
        assert_eq!(hu.correct("tüző", &[runner_up(1, 'ü', 'u')]), None, "the runner-up is neither");
    }

    #[test]
    fn an_ambiguous_word_and_words_with_digits_stay() {
        let l = lexicon("aeiouäé", &["mäse", "masé"]);
        assert_eq!(l.correct("mase", &[]), None, "two candidates");
        let l = lexicon("aeiouäöü", &["über"]);
        assert_eq!(l.correct("Uber2", &[]), None);
    }
}
