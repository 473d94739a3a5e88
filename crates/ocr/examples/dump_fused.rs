//! Writes a model after the load-time rewrites, for profiling outside the engine:
//! `cargo run --release -p ocr --example dump_fused -- in.onnx out.onnx`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let bytes = std::fs::read(&args[1]).expect("read model");
    let (out, stats) = ocr::fuse::optimise(&bytes).expect("rewrite");
    eprintln!("{stats:?}");
    std::fs::write(&args[2], out).expect("write model");
}
