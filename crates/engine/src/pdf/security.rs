//! Protect (encrypt with AES-256) and unlock (remove encryption).
//!
//! Protect: AES-256 (security handler revision 6). At least one password is required.
//! Without `owner_password` the user password is used as owner password too (so the
//! restrictions cannot be lifted without knowing it); without `user_password` the file
//! opens without a password and only the permissions apply. Permissions default to
//! allowed; `allow_print` also governs high-quality printing, `allow_modify` also
//! page assembly, `allow_annotate` also form filling; text extraction for accessibility
//! is always allowed. An input that needs a password is refused (`encrypted_input`); an
//! owner-password-only input is re-encrypted with the new settings.
//!
//! Unlock: a PDF that needs a password is opened with `password`, missing or wrong gives
//! `invalid_password`. Passwords are UTF-8 strings; MuPDF converts them to
//! PDFDocEncoding for RC4/AES-128 files (revision 4 and older) and applies SASLprep for
//! AES-256 (revisions 5 and 6), so non-ASCII passwords work with both. Owner-password-only PDFs open without a password and are
//! unlocked without one: the owner password only guards permissions, which viewers
//! enforce voluntarily. Unencrypted input is copied unchanged in content.

use std::path::Path;

use mupdf::pdf::{Encryption, Permission};
use serde::Deserialize;

use crate::control::JobControl;
use crate::error::{EngineError, Result};
use crate::pdf::content::repair_page_contents;
use crate::pdf::open::{open_pdf, PasswordPolicy, Source};
use crate::pdf::save::{save_pdf, write_options};
use crate::pdf::PageOpResult;

/// MuPDF keeps passwords in 128-byte buffers with a terminating NUL.
pub const MAX_PASSWORD_BYTES: usize = 127;

/// Options of [`protect`].
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProtectOptions {
    /// Password needed to open the file. Empty means none.
    pub user_password: Option<String>,
    /// Password that lifts the restrictions. Defaults to the user password.
    pub owner_password: Option<String>,
    /// Printing (default true).
    pub allow_print: Option<bool>,
    /// Changing the document and assembling pages (default true).
    pub allow_modify: Option<bool>,
    /// Copying text and graphics (default true).
    pub allow_copy: Option<bool>,
    /// Adding annotations and filling forms (default true).
    pub allow_annotate: Option<bool>,
    /// Fail with `page_limit` when the input has more pages.
    pub max_pages: Option<u32>,
}

/// Options of [`unlock`].
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnlockOptions {
    /// The user (or owner) password; needed only when the PDF asks for one.
    pub password: Option<String>,
    /// Fail with `page_limit` when the input has more pages.
    pub max_pages: Option<u32>,
}

fn checked_password(label: &str, p: &Option<String>) -> Result<Option<String>> {
    match p.as_deref() {
        None | Some("") => Ok(None),
        Some(p) if p.len() > MAX_PASSWORD_BYTES => {
            Err(EngineError::invalid_options(format!("{label} is longer than {MAX_PASSWORD_BYTES} bytes")))
        }
        Some(p) if p.contains('\0') => {
            Err(EngineError::invalid_options(format!("{label} must not contain NUL characters")))
        }
        Some(p) => Ok(Some(p.to_owned())),
    }
}

/// Encrypts with AES-256 and the given passwords and permissions.
pub fn protect(input: &Path, output: &Path, options: &ProtectOptions, control: &JobControl) -> Result<PageOpResult> {
    let user = checked_password("user_password", &options.user_password)?;
    let owner = checked_password("owner_password", &options.owner_password)?;
    let owner = match (owner, &user) {
        (Some(o), _) => o,
        (None, Some(u)) => u.clone(),
        (None, None) => return Err(EngineError::invalid_options("protect needs a user_password or an owner_password")),
    };
    let mut permissions = Permission::ACCESSIBILITY;
    let allow = |o: Option<bool>| o.unwrap_or(true);
    if allow(options.allow_print) {
        permissions |= Permission::PRINT | Permission::PRINT_HQ;
    }
    if allow(options.allow_modify) {
        permissions |= Permission::MODIFY | Permission::ASSEMBLE;
    }
    if allow(options.allow_copy) {
        permissions |= Permission::COPY;
    }
    if allow(options.allow_annotate) {
        permissions |= Permission::ANNOTATE | Permission::FORM;
    }

    control.checkpoint()?;
    let opened = open_pdf(Source::Path(input), PasswordPolicy::Refuse, options.max_pages)?;
    let n = opened.page_count();
    control.start(n as u64)?;
    repair_page_contents(opened.pages.iter().enumerate().map(|(i, p)| (i + 1, p)), control)?;

    let mut write = write_options(Encryption::Aes256);
    write.set_permissions(permissions).set_owner_password(&owner).set_user_password(user.as_deref().unwrap_or(""));
    control.checkpoint()?;
    let output_bytes = save_pdf(&opened.doc, output, write, control)?;
    control.finish();
    Ok(PageOpResult { pages_processed: n as u32, page_count: n as u32, output_bytes })
}

/// Writes a decrypted copy.
pub fn unlock(input: &Path, output: &Path, options: &UnlockOptions, control: &JobControl) -> Result<PageOpResult> {
    control.checkpoint()?;
    let password = options.password.as_deref().filter(|p| !p.is_empty());
    let opened = open_pdf(Source::Path(input), PasswordPolicy::Authenticate(password), options.max_pages)?;
    let n = opened.page_count();
    control.start(n as u64)?;
    repair_page_contents(opened.pages.iter().enumerate().map(|(i, p)| (i + 1, p)), control)?;
    control.checkpoint()?;
    let output_bytes = save_pdf(&opened.doc, output, write_options(Encryption::None), control)?;
    control.finish();
    Ok(PageOpResult { pages_processed: n as u32, page_count: n as u32, output_bytes })
}
