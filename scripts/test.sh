#!/usr/bin/env bash
# Installs, builds and runs every test: the Rust engine's tests (unit and whole-corpus), then
# the Bun tests (unit, addon, API over real HTTP against real Postgres, the web console in
# Chromium, the TypeScript and Python clients against the real service: clients/typescript/test
# and clients/python/tests, where a failing pytest fails bun test).
# Tests create a fresh database per test file on the Postgres named by DATABASE_URL
# (default postgres://postgres@127.0.0.1:5432/test).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
# Format and lint first (cheap, and a failure says what to fix): rustfmt.toml is the style;
# clippy lints the library targets (the addon's napi exports are dead code to a test build).
cargo fmt --all -- --check
cargo clippy --workspace --release -- -D warnings
logs="$(mktemp -d)"
cargo test --release --workspace --exclude engine-node 2>&1 | tee "$logs/cargo.log"
bun x tsc --noEmit -p .
bun x tsc --noEmit -p console
(cd clients/typescript && bun x tsc --noEmit -p . && bun x tsc --noEmit -p tsconfig.test.json)
bun test --timeout 120000 2>&1 | tee "$logs/bun.log"
# What did not run, and why: a test without its inputs is ignored (cargo) or skipped (bun).
echo "cargo: $(grep -c ' \.\.\. ignored' "$logs/cargo.log" || true) ignored"; grep -o 'ignored, .*' "$logs/cargo.log" | sort | uniq -c || true
skips="$(grep -oE '^ *[0-9]+ skip$' "$logs/bun.log" | tail -1 | tr -dc 0-9 || true)"
echo "bun: ${skips:-0} skipped"; grep -m1 '^SKIP: ' "$logs/bun.log" || true
