//! protect and unlock, on PDFs built here and on the corpus's encrypted PDFs, and how the
//! other page operations treat encrypted inputs: encryption, passwords and permissions
//! checked by reopening the output with MuPDF and qpdf.

mod common;

use common::{assert_valid, corpus_file, open, synthetic_pdf, tool, write, Scratch};
use engine::{
    delete_pages, merge, protect, rotate, unlock, DeletePagesOptions, ErrorCode, JobControl, ProtectOptions,
    RotateOptions, UnlockOptions,
};

fn ctl() -> JobControl {
    JobControl::new()
}

#[test]
fn protect_encrypts_with_aes256_and_the_user_password_opens_it() {
    let scratch = Scratch::new("protect");
    let input = write(&scratch, "in.pdf", &synthetic_pdf(&[(612, 792, 0); 4], true));
    let out = scratch.path("out.pdf");
    let opts = ProtectOptions {
        user_password: Some("s3cret-ü".into()),
        owner_password: Some("owner".into()),
        allow_copy: Some(false),
        ..Default::default()
    };
    let r = protect(&input, &out, &opts, &ctl()).unwrap();
    assert_eq!(r.page_count, 4);
    let mut d = open(&out);
    assert!(d.needs_password().unwrap());
    assert!(!d.authenticate("wrong").unwrap());
    assert!(d.authenticate("s3cret-ü").unwrap());
    assert_eq!(d.page_count().unwrap(), 4);
    assert_valid(&out, 4, Some("s3cret-ü"));
    let show = tool("qpdf").args(["--password=owner", "--show-encryption"]).arg(&out).output().unwrap();
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(text.contains("R = 6"), "{text}");
    assert!(text.contains("extract for any purpose: not allowed"), "{text}");
    assert!(text.contains("print high resolution: allowed"), "{text}");
}

#[test]
fn protect_needs_a_password_and_defaults_owner_to_user() {
    let scratch = Scratch::new("protect-opts");
    let input = write(&scratch, "in.pdf", &synthetic_pdf(&[(612, 792, 0), (595, 842, 0), (300, 420, 0)], false));
    let out = scratch.path("out.pdf");
    let err = protect(&input, &out, &ProtectOptions::default(), &ctl()).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidOptions);
    let long = ProtectOptions { user_password: Some("x".repeat(128)), ..Default::default() };
    assert_eq!(protect(&input, &out, &long, &ctl()).unwrap_err().code, ErrorCode::InvalidOptions);

    let only_user = ProtectOptions { user_password: Some("u".into()), ..Default::default() };
    protect(&input, &out, &only_user, &ctl()).unwrap();
    let mut d = open(&out);
    assert!(d.needs_password().unwrap());
    assert!(d.authenticate("u").unwrap());

    // Owner only: opens without a password, still encrypted.
    let only_owner =
        ProtectOptions { owner_password: Some("o".into()), allow_print: Some(false), ..Default::default() };
    protect(&input, &out, &only_owner, &ctl()).unwrap();
    let d = open(&out);
    assert!(!d.needs_password().unwrap());
    assert!(d.trailer().unwrap().get_dict("Encrypt").unwrap().is_some());
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn unlock_removes_encryption_with_the_right_password() {
    let scratch = Scratch::new("unlock");
    for (name, password) in
        [("encrypted-aes256-unicode-password.pdf", "pässwört"), ("encrypted-libreoffice-rc4.pdf", "openpassword")]
    {
        let input = corpus_file(name);
        let out = scratch.path("out.pdf");
        for wrong in [None, Some("wrong".to_string())] {
            let err = unlock(&input, &out, &UnlockOptions { password: wrong, max_pages: None }, &ctl()).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidPassword, "{name}");
            assert!(!out.exists());
        }
        let r =
            unlock(&input, &out, &UnlockOptions { password: Some(password.into()), max_pages: None }, &ctl()).unwrap();
        assert_eq!(r.page_count, 1);
        let d = open(&out);
        assert!(!d.needs_password().unwrap(), "{name}");
        assert!(d.trailer().unwrap().get_dict("Encrypt").unwrap().is_none(), "{name}");
        assert_valid(&out, 1, None);
        let _ = std::fs::remove_file(&out);
    }
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn unlock_of_owner_password_only_pdf_needs_no_password() {
    let input = corpus_file("owner-password-aes-30-pages.pdf");
    let scratch = Scratch::new("unlock-owner");
    let out = scratch.path("out.pdf");
    let r = unlock(&input, &out, &UnlockOptions::default(), &ctl()).unwrap();
    assert_eq!(r.page_count, 30);
    let d = open(&out);
    assert!(d.trailer().unwrap().get_dict("Encrypt").unwrap().is_none());
    assert_valid(&out, 30, None);
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn page_ops_on_a_user_password_pdf_fail_with_encrypted_input() {
    let input = corpus_file("encrypted-libreoffice-rc4.pdf");
    let scratch = Scratch::new("encrypted-input");
    let out = scratch.path("out.pdf");
    let err = rotate(&input, &out, &RotateOptions { degrees: 90, pages: None, max_pages: None }, &ctl()).unwrap_err();
    assert_eq!(err.code, ErrorCode::EncryptedInput);
    assert!(err.message.contains("unlock"), "{}", err.message);
    let other = write(&scratch, "other.pdf", &synthetic_pdf(&[(612, 792, 0)], false));
    let err = merge(&[other, input.clone()], &out, &ctl()).unwrap_err();
    assert_eq!(err.code, ErrorCode::EncryptedInput);
    let err = protect(&input, &out, &ProtectOptions { user_password: Some("x".into()), ..Default::default() }, &ctl())
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::EncryptedInput);
    assert!(!out.exists());
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn owner_password_only_pdf_stays_encrypted_after_a_page_op() {
    let input = corpus_file("owner-password-aes-30-pages.pdf");
    let scratch = Scratch::new("owner-keep");
    let out = scratch.path("out.pdf");
    delete_pages(&input, &out, &DeletePagesOptions { pages: vec![0], max_pages: None }, &ctl()).unwrap();
    let d = open(&out);
    assert!(!d.needs_password().unwrap());
    assert!(d.trailer().unwrap().get_dict("Encrypt").unwrap().is_some());
    assert_valid(&out, 29, None);
}
