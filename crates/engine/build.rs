//! Compiles the MuPDF C shims of the engine (csrc/*.c: the compressor's passes, render_thread,
//! mcid, graft, locks, g4, pdfa) against the MuPDF headers of
//! the `mupdf-sys` crate in Cargo's registry; the MuPDF library itself is linked by
//! `mupdf-sys`. Also csrc/turbo.c (JPEG encoding with the system libjpeg-turbo, loaded
//! with dlopen) when /usr/include/jpeglib.h exists. csrc/compress_deflate.c uses libdeflate, built
//! and linked by the `libdeflate-sys` crate. Also tells the integration tests which of their
//! third-party inputs are present (../test_inputs.rs).
use std::path::PathBuf;

#[path = "../test_inputs.rs"]
mod test_inputs;

fn mupdf_include() -> PathBuf {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .expect("CARGO_HOME or HOME");
    let src = home.join("registry").join("src");
    let mut found = Vec::new();
    for index in std::fs::read_dir(&src).into_iter().flatten().flatten() {
        for pkg in std::fs::read_dir(index.path()).into_iter().flatten().flatten() {
            let name = pkg.file_name().to_string_lossy().into_owned();
            // Keep in step with the `mupdf` version in the workspace (mupdf-sys 0.8.x).
            if name.starts_with("mupdf-sys-0.8.") {
                let inc = pkg.path().join("mupdf").join("include");
                if inc.join("mupdf").join("pdf.h").exists() {
                    found.push(inc);
                }
            }
        }
    }
    found.sort();
    found.pop().expect("MuPDF headers of mupdf-sys 0.8 in the cargo registry")
}

fn main() {
    test_inputs::emit();
    println!("cargo:rerun-if-changed=csrc/compress.c");
    println!("cargo:rerun-if-changed=csrc/compress_images.c");
    println!("cargo:rerun-if-changed=csrc/compress_rewrite.c");
    println!("cargo:rerun-if-changed=csrc/compress_metadata.c");
    println!("cargo:rerun-if-changed=csrc/compress_deflate.c");
    println!("cargo:rerun-if-changed=csrc/compress_walk.c");
    println!("cargo:rerun-if-changed=csrc/compress_fonts.c");
    println!("cargo:rerun-if-changed=csrc/compress_font_usage.c");
    println!("cargo:rerun-if-changed=csrc/compress_dedup.c");
    println!("cargo:rerun-if-changed=csrc/compress_colorspace.c");
    println!("cargo:rerun-if-changed=csrc/compressor.h");
    println!("cargo:rerun-if-changed=csrc/compress_font_usage.h");
    println!("cargo:rerun-if-changed=csrc/render_thread.c");
    println!("cargo:rerun-if-changed=csrc/caught.h");
    println!("cargo:rerun-if-changed=csrc/graft.c");
    println!("cargo:rerun-if-changed=csrc/mcid.c");
    println!("cargo:rerun-if-changed=csrc/mcid.h");
    println!("cargo:rerun-if-changed=csrc/locks.c");
    println!("cargo:rerun-if-changed=csrc/locks.h");
    println!("cargo:rerun-if-changed=csrc/g4.c");
    println!("cargo:rerun-if-changed=csrc/pdfa.c");
    cc::Build::new()
        .file("csrc/compress.c")
        .file("csrc/compress_images.c")
        .file("csrc/compress_rewrite.c")
        .file("csrc/compress_metadata.c")
        .file("csrc/compress_deflate.c")
        .file("csrc/compress_walk.c")
        .file("csrc/compress_fonts.c")
        .file("csrc/compress_font_usage.c")
        .file("csrc/compress_dedup.c")
        .file("csrc/compress_colorspace.c")
        .file("csrc/render_thread.c")
        .file("csrc/graft.c")
        .file("csrc/mcid.c")
        .file("csrc/locks.c")
        .file("csrc/g4.c")
        .file("csrc/pdfa.c")
        .include(mupdf_include())
        // libdeflate.h, from the libdeflate-sys crate (which builds and links libdeflate).
        .include(std::env::var_os("DEP_LIBDEFLATE_INCLUDE").expect("libdeflate-sys's include directory"))
        .warnings(false)
        .compile("engine_compress");

    // libjpeg-turbo encoder and decoder (loaded at run time, see csrc/turbo.c); needs
    // only the system's jpeglib.h to build. Without it the engine uses jpeg-encoder
    // alone, and compress leaves JPEG images to MuPDF's image rewriter.
    println!("cargo::rustc-check-cfg=cfg(engine_turbo)");
    println!("cargo:rerun-if-changed=csrc/turbo.c");
    if std::path::Path::new("/usr/include/jpeglib.h").exists() {
        cc::Build::new().file("csrc/turbo.c").warnings(false).compile("engine_turbo");
        println!("cargo:rustc-cfg=engine_turbo");
    }
}
