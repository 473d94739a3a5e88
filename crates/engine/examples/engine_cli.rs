//! Manual checks from a shell: `cargo run -p engine --example engine_cli -- <op> <input> [output] [password]`
//! with op = identify | rotate | reverse | delete-first | merge-self | split | protect | unlock.

use std::path::{Path, PathBuf};

use engine::{
    delete_pages, identify, merge, protect, reorder, rotate, split, unlock, DeletePagesOptions, JobControl,
    ProtectOptions, ReorderOptions, RotateOptions, SplitOptions, UnlockOptions,
};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: engine_cli <op> <input> [output] [password]");
        std::process::exit(2);
    }
    let control = JobControl::new();
    let input = Path::new(&args[2]);
    let output = Path::new(args.get(3).map_or("out.pdf", String::as_str));
    let password = args.get(4).cloned();
    let pages = || identify(input).ok().and_then(|i| i.page_count).unwrap_or(0) as i64;
    let result = match args[1].as_str() {
        "identify" => identify(input).map(|i| format!("{i:?}")),
        "rotate" => {
            let o = RotateOptions { degrees: 90, pages: None, max_pages: None };
            rotate(input, output, &o, &control).map(|r| format!("{r:?}"))
        }
        "reverse" => {
            let o = ReorderOptions { order: (0..pages()).rev().collect(), max_pages: None };
            reorder(input, output, &o, &control).map(|r| format!("{r:?}"))
        }
        "delete-first" => {
            let o = DeletePagesOptions { pages: vec![0], max_pages: None };
            delete_pages(input, output, &o, &control).map(|r| format!("{r:?}"))
        }
        "merge-self" => {
            let inputs = [PathBuf::from(input), PathBuf::from(input)];
            merge(&inputs, output, &control).map(|r| format!("{r:?}"))
        }
        "split" => {
            let o = SplitOptions::default();
            split(input, output, &o, &control).map(|r| format!("{r:?}"))
        }
        "protect" => {
            let o = ProtectOptions { user_password: password, ..Default::default() };
            protect(input, output, &o, &control).map(|r| format!("{r:?}"))
        }
        "unlock" => {
            let o = UnlockOptions { password, max_pages: None };
            unlock(input, output, &o, &control).map(|r| format!("{r:?}"))
        }
        op => {
            eprintln!("unknown op {op}");
            std::process::exit(2);
        }
    };
    match result {
        Ok(s) => println!("{s}"),
        Err(e) => {
            eprintln!("{}: {}", e.code, e.message);
            std::process::exit(1);
        }
    }
}
