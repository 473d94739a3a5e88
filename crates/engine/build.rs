//! Compiles the MuPDF C shims of the engine (csrc/*.c: the compressor's passes, render_thread,
//! mcid, graft, locks, g4, pdfa) against the MuPDF headers of the `mupdf-sys` crate; the MuPDF
//! library itself is linked by `mupdf-sys`. Also csrc/turbo.c (JPEG encoding with the system
//! libjpeg-turbo, loaded with dlopen) when /usr/include/jpeglib.h exists.
//! csrc/compress_deflate.c uses libdeflate, built and linked by the `libdeflate-sys` crate, and
//! zlib-rs through the C API that `libz-rs-sys` exports (its `semver-prefix` feature: the names
//! carry the crate's version, so they do not meet those of MuPDF's bundled zlib). Also tells
//! the integration tests which of their third-party inputs are present (../test_inputs.rs).
//!
//! Where the headers are: a crate's build script learns a dependency's directories from the
//! `DEP_<links>_<key>` variables only when that dependency prints `cargo:<key>=...` metadata.
//! `libdeflate-sys` does (`DEP_LIBDEFLATE_INCLUDE`). `mupdf-sys` 0.8 declares
//! `links = "mupdf-wrapper"` but prints no include metadata (so `DEP_MUPDF_WRAPPER_INCLUDE`
//! does not exist), `libz-rs-sys` has no `links` key at all, and neither is a direct
//! dependency of this crate with `links` (DEP_ variables reach direct dependents only). So the
//! packages' own directories are asked of Cargo: `cargo metadata` resolves the workspace from
//! its Cargo.lock (offline: the outer build has every source already, and locked: a build
//! script must not rewrite the lock file) and gives each package's manifest path, wherever its
//! source is (Cargo's registry under any CARGO_HOME, a vendored directory, a git checkout).
//! MuPDF's headers are `mupdf/include` next to mupdf-sys's Cargo.toml, zlib-rs's zlib.h is in
//! `include` next to libz-rs-sys's.
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../test_inputs.rs"]
mod test_inputs;

/// A package of the resolved workspace: its source directory and version.
struct Package {
    dir: PathBuf,
    version: String,
}

/// The packages named `names`, from `cargo metadata` of this workspace (see the header).
fn packages(names: &[&str]) -> Vec<Package> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let out = Command::new(&cargo)
        .args(["metadata", "--format-version", "1", "--offline", "--locked", "--manifest-path"])
        .arg(&manifest)
        .output()
        .unwrap_or_else(|e| panic!("running {cargo:?} metadata: {e}"));
    if !out.status.success() {
        panic!("{cargo:?} metadata failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("cargo metadata's JSON");
    // A new lock file (another mupdf-sys, say) makes the answer stale.
    if let Some(root) = meta["workspace_root"].as_str() {
        println!("cargo:rerun-if-changed={}", Path::new(root).join("Cargo.lock").display());
    }
    let all = meta["packages"].as_array().expect("cargo metadata's packages");
    names
        .iter()
        .map(|&name| {
            let found: Vec<&serde_json::Value> = all.iter().filter(|p| p["name"] == name).collect();
            // Two versions of one of these in the graph would leave the headers ambiguous.
            assert!(found.len() == 1, "{} packages named {name} in the workspace's dependencies", found.len());
            let manifest = Path::new(found[0]["manifest_path"].as_str().expect("manifest_path"));
            Package {
                dir: manifest.parent().expect("a package directory").to_path_buf(),
                version: found[0]["version"].as_str().expect("version").to_owned(),
            }
        })
        .collect()
}

/// The prefix libz-rs-sys's `semver-prefix` feature puts on the zlib names it exports:
/// `LIBZ_RS_SYS_v<major>_<minor>_x_` before 1.0.
fn zlib_rs_prefix(version: &str) -> String {
    let mut parts = version.split('.');
    let (major, minor) = (parts.next().unwrap_or("0"), parts.next().unwrap_or("0"));
    format!("LIBZ_RS_SYS_v{major}_{minor}_x_")
}

fn main() {
    test_inputs::emit();
    let [mupdf, zlib_rs]: [Package; 2] =
        packages(&["mupdf-sys", "libz-rs-sys"]).try_into().unwrap_or_else(|_| unreachable!());
    let mupdf_include = mupdf.dir.join("mupdf").join("include");
    assert!(
        mupdf_include.join("mupdf").join("pdf.h").exists(),
        "MuPDF's headers are not in {}",
        mupdf_include.display()
    );
    let zlib_include = zlib_rs.dir.join("include");
    assert!(zlib_include.join("zlib.h").exists(), "zlib-rs's zlib.h is not in {}", zlib_include.display());

    let sources = [
        "compress.c",
        "compress_images.c",
        "compress_rewrite.c",
        "compress_metadata.c",
        "compress_deflate.c",
        "compress_walk.c",
        "compress_fonts.c",
        "compress_font_usage.c",
        "compress_dedup.c",
        "compress_colorspace.c",
        "render_thread.c",
        "graft.c",
        "mcid.c",
        "locks.c",
        "g4.c",
        "pdfa.c",
    ];
    let headers = ["compressor.h", "compress_font_usage.h", "caught.h", "mcid.h", "locks.h"];
    for f in sources.iter().chain(&headers) {
        println!("cargo:rerun-if-changed=csrc/{f}");
    }
    let mut build = cc::Build::new();
    for f in sources {
        build.file(format!("csrc/{f}"));
    }
    build
        .include(mupdf_include)
        // libdeflate.h, from the libdeflate-sys crate (which builds and links libdeflate).
        .include(std::env::var_os("DEP_LIBDEFLATE_INCLUDE").expect("libdeflate-sys's include directory"))
        .include(zlib_include)
        .define("ENGINE_ZRS_PREFIX", zlib_rs_prefix(&zlib_rs.version).as_str())
        .warnings(false)
        .compile("engine_compress");

    // libjpeg-turbo encoder and decoder (loaded at run time, see csrc/turbo.c); needs
    // only the system's jpeglib.h to build. Without it the engine uses jpeg-encoder
    // alone, and compress leaves JPEG images to MuPDF's image rewriter.
    println!("cargo::rustc-check-cfg=cfg(engine_turbo)");
    println!("cargo:rerun-if-changed=csrc/turbo.c");
    if Path::new("/usr/include/jpeglib.h").exists() {
        cc::Build::new().file("csrc/turbo.c").warnings(false).compile("engine_turbo");
        println!("cargo:rustc-cfg=engine_turbo");
    }
}
