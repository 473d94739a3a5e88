//! Tells the integration tests which of their third-party inputs (the corpus, the OCR models)
//! are present: ../test_inputs.rs.
#[path = "../test_inputs.rs"]
mod test_inputs;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    test_inputs::emit();
}
