//! Render, redact and compress from a shell, and the per-page timer used by
//! scripts/bench (prints one JSON line on stdout):
//!
//! ```text
//! pagework render   <in> <out> [dpi] [quality] [first,last (0-based)]   # RENDER_THREADS=n
//! pagework pagetimes <in> <dpi> <quality> <first> <last>   # one thread, ms per page
//! pagework redact   <in> <out> <page> <x> <y> <w> <h> [dpi]
//! pagework compress <in> <out> <light|balanced|strong>
//! pagework pageop   <merge|split|rotate|delete|encrypt|decrypt> <in> <out> [second input | password]
//! ```
//!
//! The engine reads no environment; for comparisons this tool maps the variables the
//! service's configuration reads (src/config.ts) onto the options: ENGINE_JPEG=rust (render,
//! redact, pagetimes), ENGINE_COMPRESS_SUBSET=off, ENGINE_COMPRESS_GUARD=always,
//! ENGINE_COMPRESS_IMAGES=mupdf|mupdf-inplace (compress).

use std::path::Path;
use std::time::Instant;

use engine::pagework::compress::{compress, CompressLevel, CompressOptions, ImagePass};
use engine::pagework::redact::{redact, RedactOptions, RedactRegion};
use engine::pagework::render::{render_jpeg, render_page_timed, JpegEncoder, RenderOptions};
use engine::JobControl;

fn arg<T: std::str::FromStr>(args: &[String], i: usize) -> Option<T> {
    args.get(i).and_then(|s| s.parse().ok())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let control = JobControl::new();
    let op = args.get(1).map(String::as_str).unwrap_or("");
    let out = match op {
        "render" => {
            let pages = args.get(6).map(|s| {
                let (a, b) = s.split_once(',').unwrap_or((s, s));
                (a.parse::<i64>().unwrap()..=b.parse::<i64>().unwrap()).collect::<Vec<_>>()
            });
            let o = RenderOptions {
                dpi: arg(&args, 4),
                quality: arg(&args, 5),
                threads: threads_arg(),
                pages,
                max_pages: None,
                jpeg_encoder: jpeg_encoder(),
            };
            let t = Instant::now();
            render_jpeg(Path::new(&args[2]), Path::new(&args[3]), &o, &control).map(|r| {
                format!(
                    "{{\"ok\":true,\"pages\":{},\"bytes\":{},\"zip\":{},\"grey\":{},\"ms\":{:.1}}}",
                    r.pages_processed,
                    r.output_bytes,
                    r.zip,
                    r.grey_pages,
                    t.elapsed().as_secs_f64() * 1e3
                )
            })
        }
        "pagetimes" => {
            let (dpi, q, first, last): (u32, u8, usize, usize) =
                (arg(&args, 3).unwrap(), arg(&args, 4).unwrap(), arg(&args, 5).unwrap(), arg(&args, 6).unwrap());
            if std::env::var_os("PAGEWORK_NOICC").is_some() {
                mupdf::Context::get().disable_icc();
            }
            let doc = mupdf::Document::open(&args[2]).expect("open");
            let (mut times, mut raster, mut encode) = (Vec::new(), Vec::new(), Vec::new());
            let mut bytes = 0usize;
            for i in first..=last {
                let t = Instant::now();
                let (jpeg, r) = render_page_timed(&doc, i, dpi, q, jpeg_encoder()).expect("render");
                bytes += jpeg.jpeg.len();
                let all = t.elapsed();
                times.push(format!("{:.2}", all.as_secs_f64() * 1e3));
                raster.push(format!("{:.2}", r.as_secs_f64() * 1e3));
                encode.push(format!("{:.2}", (all - r).as_secs_f64() * 1e3));
            }
            Ok(format!(
                "{{\"ok\":true,\"bytes\":{bytes},\"ms\":[{}],\"raster_ms\":[{}],\"encode_ms\":[{}]}}",
                times.join(","),
                raster.join(","),
                encode.join(",")
            ))
        }
        "redact" => {
            let region = RedactRegion {
                page: arg(&args, 4).unwrap(),
                x: arg(&args, 5).unwrap(),
                y: arg(&args, 6).unwrap(),
                w: arg(&args, 7).unwrap(),
                h: arg(&args, 8).unwrap(),
            };
            let o = RedactOptions {
                regions: vec![region],
                dpi: arg(&args, 9),
                max_pages: None,
                jpeg_encoder: jpeg_encoder(),
            };
            let t = Instant::now();
            redact(Path::new(&args[2]), Path::new(&args[3]), &o, &control).map(|r| {
                format!(
                    "{{\"ok\":true,\"pages\":{},\"bytes\":{},\"ms\":{:.1}}}",
                    r.pages_processed,
                    r.output_bytes,
                    t.elapsed().as_secs_f64() * 1e3
                )
            })
        }
        "compress" => {
            let level = CompressLevel::parse(args.get(4).map_or("balanced", String::as_str)).unwrap();
            let o = CompressOptions {
                level,
                subset_fonts: std::env::var("ENGINE_COMPRESS_SUBSET").map_or(true, |v| v != "off"),
                guard_always: std::env::var("ENGINE_COMPRESS_GUARD").is_ok_and(|v| v == "always"),
                images: ImagePass::parse(&std::env::var("ENGINE_COMPRESS_IMAGES").unwrap_or_else(|_| "engine".into()))
                    .unwrap(),
                max_pages: None,
            };
            let t = Instant::now();
            compress(Path::new(&args[2]), Path::new(&args[3]), &o, &control).map(|r| {
                format!(
                    "{{\"ok\":true,\"pages\":{},\"bytes\":{},\"kept_original\":{},\"path\":\"{}\",\"ms\":{:.1}}}",
                    r.page_count,
                    r.output_bytes,
                    r.kept_original,
                    r.path.as_str(),
                    t.elapsed().as_secs_f64() * 1e3
                )
            })
        }
        "pageop" => {
            let (input, output) = (Path::new(&args[3]), Path::new(&args[4]));
            let extra = args.get(5).cloned();
            let t = Instant::now();
            let r = match args[2].as_str() {
                "merge" => engine::merge(&[input.into(), extra.unwrap().into()], output, &control).map(|_| ()),
                "split" => engine::split(input, output, &engine::SplitOptions::default(), &control).map(|_| ()),
                "rotate" => engine::rotate(
                    input,
                    output,
                    &engine::RotateOptions { degrees: 90, pages: None, max_pages: None },
                    &control,
                )
                .map(|_| ()),
                "delete" => engine::delete_pages(
                    input,
                    output,
                    &engine::DeletePagesOptions { pages: (1..10).collect(), max_pages: None },
                    &control,
                )
                .map(|_| ()),
                "encrypt" => engine::protect(
                    input,
                    output,
                    &engine::ProtectOptions {
                        user_password: extra.clone(),
                        owner_password: extra.map(|p| format!("{p}-owner")),
                        ..Default::default()
                    },
                    &control,
                )
                .map(|_| ()),
                "decrypt" => {
                    engine::unlock(input, output, &engine::UnlockOptions { password: extra, max_pages: None }, &control)
                        .map(|_| ())
                }
                other => panic!("unknown page op {other}"),
            };
            r.map(|()| format!("{{\"ok\":true,\"ms\":{:.1}}}", t.elapsed().as_secs_f64() * 1e3))
        }
        _ => {
            eprintln!("usage: see the doc comment of examples/pagework.rs");
            std::process::exit(2);
        }
    };
    match out {
        Ok(line) => println!("{line}"),
        Err(e) => {
            println!("{{\"ok\":false,\"code\":\"{}\",\"message\":{:?}}}", e.code, e.message);
            std::process::exit(1);
        }
    }
}

/// `ENGINE_JPEG` env var (`rust` or `auto`, the default).
fn jpeg_encoder() -> JpegEncoder {
    JpegEncoder::parse(&std::env::var("ENGINE_JPEG").unwrap_or_else(|_| "auto".into())).unwrap()
}

/// `RENDER_THREADS` env var; default: the engine's (number of cores).
fn threads_arg() -> Option<usize> {
    std::env::var("RENDER_THREADS").ok().and_then(|v| v.parse().ok())
}
