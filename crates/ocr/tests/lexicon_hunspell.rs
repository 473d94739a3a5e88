//! Word correction with Debian's Hunspell dictionaries (scripts/setup.sh installs them):
//! the misreadings the generated language pages showed, read against the real
//! dictionaries, their encodings included (Lithuanian's is ISO 8859-13).
use std::path::PathBuf;

use ocr::lexicon::{dictionary_dir, for_language, Lexicon};

/// The directory `for_language` reads; panics without the dictionaries (Debian's
/// hunspell-* packages), which these tests check with.
fn dictionaries() -> PathBuf {
    let dir = dictionary_dir();
    assert!(
        dir.join("de_DE.aff").exists(),
        "no Hunspell dictionaries in {}: install hunspell-de-de and the others scripts/setup.sh lists",
        dir.display()
    );
    dir
}

#[test]
fn misread_diacritics_are_corrected_against_each_languages_dictionary() {
    let dir = dictionaries();
    for (stem, read, meant) in [
        ("de_DE", "Uber", "Über"),
        ("cs_CZ", "žlutoučký", "žluťoučký"),
        ("cs_CZ", "d’ábelské", "ďábelské"),
        ("lv_LV", "rūkīši", "rūķīši"),
        ("lv_LV", "koncertflīġeļu", "koncertflīģeļu"),
        ("lt_LT", "teisèmis", "teisėmis"),
        ("is_IS", "beim", "þeim"),
        // Debian's Turkish numbers its flags from 0 (loaded with them moved up by one).
        ("tr_TR", "bakimından", "bakımından"),
        ("tr_TR", "ışikları", "ışıkları"),
    ] {
        let lexicon = Lexicon::load(&dir, stem).unwrap_or_else(|e| panic!("{stem}: {e}"));
        assert_eq!(lexicon.correct(read, &[]).as_deref(), Some(meant), "{stem}");
        assert_eq!(lexicon.correct(meant, &[]), None, "{stem}: a known word stays");
    }
}

#[test]
fn english_has_a_dictionary_so_its_words_are_never_taken_for_another_languages() {
    dictionaries();
    let english = for_language("eng").expect("en_US");
    assert!(english.knows("the") && english.knows("The"));
    assert!(for_language("fra").expect("fr_FR").knows("thé"));
}

fn page_of(words: &[&str]) -> ocr::PageText {
    let word = |t: &str| ocr::Word {
        text: t.into(),
        confidence: 0.9,
        bbox: [0.0; 4],
        quad: [[0.0; 2]; 4],
        alternatives: Vec::new(),
    };
    let line = ocr::Line {
        text: words.join(" "),
        confidence: 0.9,
        bbox: [0.0; 4],
        quad: [[0.0; 2]; 4],
        words: words.iter().map(|w| word(w)).collect(),
    };
    ocr::PageText {
        width: 100,
        height: 100,
        rotation: 0,
        blocks: vec![ocr::Block { bbox: [0.0; 4], lines: vec![line] }],
    }
}

#[test]
fn a_page_is_corrected_only_when_every_requested_language_has_a_dictionary() {
    dictionaries();
    let langs = |codes: &[&str]| codes.iter().map(|c| c.to_string()).collect::<Vec<_>>();
    let mut page = page_of(&["Uber", "den", "Hund."]);
    assert_eq!(ocr::lexicon::correct_page(&mut page, &langs(&["deu"])), 1);
    assert_eq!(page.blocks[0].lines[0].text, "Über den Hund.");
    // Finnish has no dictionary here: its words could be taken for misread German ones.
    let mut page = page_of(&["Uber", "den", "Hund."]);
    assert_eq!(ocr::lexicon::correct_page(&mut page, &langs(&["deu", "fin"])), 0);
    assert_eq!(page.blocks[0].lines[0].text, "Uber den Hund.");
}

/// An English paragraph (the LinnSequencer brochure's), one word per entry.
const ENGLISH: &str = "To record a sequence simply press RECORD and PLAY then play your MIDI keyboard in time to \
the Sequencer's click track When the sequence loops back around to bar you'll hear what you played only all timing \
errors will be";

fn runner_up(at: usize, read: char, instead: char, prob: f32) -> ocr::Alternative {
    ocr::Alternative { at, read, instead, prob }
}

fn with(mut page: ocr::PageText, word: usize, text: &str, alternatives: Vec<ocr::Alternative>) -> ocr::PageText {
    let w = &mut page.blocks[0].lines[0].words[word];
    w.text = text.into();
    w.alternatives = alternatives;
    page
}

#[test]
fn an_english_page_read_without_languages_takes_the_runner_up_that_makes_a_word() {
    dictionaries();
    let words: Vec<&str> = ENGLISH.split(' ').collect();
    let page = with(page_of(&words), 1, "inchuding", vec![runner_up(3, 'h', 'l', 0.32)]);
    let page = with(page, 2, "you’Il", vec![runner_up(4, 'I', 'l', 0.16)]);
    // A loan word read with its mark, which en_US lacks (it has `naive`): kept.
    let mut page = with(page, 3, "naïve", vec![runner_up(2, 'ï', 'i', 0.2)]);
    assert_eq!(ocr::lexicon::correct_unnamed_page(&mut page), 2);
    let line = &page.blocks[0].lines[0];
    assert_eq!((line.words[1].text.as_str(), line.words[2].text.as_str()), ("including", "you’ll"));
    assert!(line.text.starts_with("To including you’ll naïve simply"), "{}", line.text);
}

#[test]
fn a_page_that_is_not_english_is_not_corrected_without_languages() {
    dictionaries();
    let german = "Die Sequenz wird aufgenommen indem man RECORD und PLAY drückt und dann im Takt des Klicks \
auf der Tastatur spielt Wenn die Sequenz zum ersten Takt zurückkehrt hört man was man gespielt hat";
    let words: Vec<&str> = german.split(' ').collect();
    let mut page = with(page_of(&words), 1, "inchuding", vec![runner_up(3, 'h', 'l', 0.32)]);
    assert_eq!(ocr::lexicon::correct_unnamed_page(&mut page), 0);
    // Too few words to tell.
    let mut page = with(page_of(&["a", "brief", "note"]), 1, "inchuding", vec![runner_up(3, 'h', 'l', 0.32)]);
    assert_eq!(ocr::lexicon::correct_unnamed_page(&mut page), 0);
}

#[test]
fn a_line_final_hyphen_the_recogniser_nearly_read_as_a_dash_becomes_the_dash_unless_it_joins_a_word() {
    dictionaries();
    let eng = ["eng".to_string()];
    let two_lines = |first: &str, second: &str, dash: f32| {
        let mut page = page_of(&["it", "plays", "in", "the", first]);
        let n = first.chars().count() - 1;
        page.blocks[0].lines[0].words[4].alternatives = vec![runner_up(n, '-', '—', dash)];
        let mut next = page_of(&[second, "played", "back"]).blocks.remove(0).lines.remove(0);
        next.text = format!("{second} played back");
        page.blocks[0].lines.push(next);
        page
    };
    let mut page = two_lines("sequence-", "when", 0.30);
    assert_eq!(ocr::lexicon::correct_page(&mut page, &eng), 1);
    assert_eq!(page.blocks[0].lines[0].text, "it plays in the sequence—");
    // A hyphenated word (`fore-` / `ground`): the join is a word.
    let mut page = two_lines("fore-", "ground", 0.30);
    assert_eq!(ocr::lexicon::correct_page(&mut page, &eng), 0);
    // The runner-up too unlikely, or the stem no word (`func-` / `tion`).
    let mut page = two_lines("sequence-", "when", 0.10);
    assert_eq!(ocr::lexicon::correct_page(&mut page, &eng), 0);
    let mut page = two_lines("func-", "tion", 0.30);
    assert_eq!(ocr::lexicon::correct_page(&mut page, &eng), 0);
}
