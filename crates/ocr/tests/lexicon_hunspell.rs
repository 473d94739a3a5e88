//! Word correction with Debian's Hunspell dictionaries (scripts/setup.sh installs them):
//! the misreadings the generated language pages showed, read against the real
//! dictionaries, their encodings included (Lithuanian's is ISO 8859-13).
use std::path::PathBuf;

use ocr::lexicon::{dictionary_dir, for_language, Lexicon};

/// The directory `for_language` reads, when it holds the dictionaries.
fn dictionaries() -> Option<PathBuf> {
    let dir = dictionary_dir();
    if dir.join("de_DE.aff").exists() {
        Some(dir)
    } else {
        eprintln!("SKIP: no Hunspell dictionaries in {} (scripts/setup.sh installs them)", dir.display());
        None
    }
}

#[test]
fn misread_diacritics_are_corrected_against_each_languages_dictionary() {
    let Some(dir) = dictionaries() else { return };
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
        assert_eq!(lexicon.correct(read).as_deref(), Some(meant), "{stem}");
        assert_eq!(lexicon.correct(meant), None, "{stem}: a known word stays");
    }
}

#[test]
fn english_has_a_dictionary_so_its_words_are_never_taken_for_another_languages() {
    if dictionaries().is_none() {
        return;
    }
    let english = for_language("eng").expect("en_US");
    assert!(english.knows("the") && english.knows("The"));
    assert!(for_language("fra").expect("fr_FR").knows("thé"));
}

fn page_of(words: &[&str]) -> ocr::PageText {
    let word = |t: &str| ocr::Word { text: t.into(), confidence: 0.9, bbox: [0.0; 4], quad: [[0.0; 2]; 4] };
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
    if dictionaries().is_none() {
        return;
    }
    let langs = |codes: &[&str]| codes.iter().map(|c| c.to_string()).collect::<Vec<_>>();
    let mut page = page_of(&["Uber", "den", "Hund."]);
    assert_eq!(ocr::lexicon::correct_page(&mut page, &langs(&["deu"])), 1);
    assert_eq!(page.blocks[0].lines[0].text, "Über den Hund.");
    // Finnish has no dictionary here: its words could be taken for misread German ones.
    let mut page = page_of(&["Uber", "den", "Hund."]);
    assert_eq!(ocr::lexicon::correct_page(&mut page, &langs(&["deu", "fin"])), 0);
    assert_eq!(page.blocks[0].lines[0].text, "Uber den Hund.");
}
