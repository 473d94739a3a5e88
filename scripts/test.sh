#!/usr/bin/env bash
# Installs, builds and runs every test: the Rust engine's tests (unit and whole-corpus), then
# the Bun tests (unit, addon, API over real HTTP against real Postgres, the web console in
# Chromium, the TypeScript and Python clients against the real service: clients/typescript/test
# and clients/python/tests, where a failing pytest fails bun test).
# Tests create a fresh database per test file on the Postgres named by DATABASE_URL
# (default postgres://postgres@127.0.0.1:5432/test); when nothing answers there, on an embedded
# Postgres started for this run in a temporary directory and stopped at exit (scripts/test-db.ts).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-test.sh
db_url_file="$(mktemp)"
bun scripts/test-db.ts "$db_url_file" &
db_pid=$!
# The helper's own exit status (it exits non-zero when signalled) must not replace the tests':
# under `set -e` a failing command in the EXIT trap would.
trap 'kill -TERM "$db_pid" 2>/dev/null || true; wait "$db_pid" 2>/dev/null || true; rm -f "$db_url_file"' EXIT
until [ -s "$db_url_file" ]; do
  kill -0 "$db_pid" 2>/dev/null || { wait "$db_pid" || true; [ -s "$db_url_file" ] && break; echo "test: no Postgres for the tests" >&2; exit 1; }
  sleep 0.2
done
DATABASE_URL="$(cat "$db_url_file")"
export DATABASE_URL
# Format and lint first (cheap, and a failure says what to fix): rustfmt.toml is the style;
# clippy lints the library targets (the addon's napi exports are dead code to a test build);
# Biome checks the TypeScript's format and lints it (biome.json: 120 columns, like rustfmt.toml;
# `bun x biome check --write .` fixes what it can).
cargo fmt --all -- --check
cargo clippy --workspace --release -- -D warnings
bun x biome ci .
logs="$(mktemp -d)"
cargo test --release --workspace --exclude engine-node 2>&1 | tee "$logs/cargo.log"
bun x tsc --noEmit -p .
bun x tsc --noEmit -p console
(cd clients/typescript && bun x tsc --noEmit -p . && bun x tsc --noEmit -p tsconfig.test.json)
bun test --timeout 120000 2>&1 | tee "$logs/bun.log"
# The images, the compose stack, a job of every operation through it, a worker container killed
# mid-job (deploy/README.md); one "SKIP: containers: ..." line where containers cannot run.
./scripts/test-containers.sh 2>&1 | tee "$logs/containers.log"
# What did not run, and why: a test without its inputs is ignored (cargo) or skipped (bun).
echo "cargo: $(grep -c ' \.\.\. ignored' "$logs/cargo.log" || true) ignored"; grep -o 'ignored, .*' "$logs/cargo.log" | sort | uniq -c || true
skips="$(grep -oE '^ *[0-9]+ skip$' "$logs/bun.log" | tail -1 | tr -dc 0-9 || true)"
echo "bun: ${skips:-0} skipped"; grep -m1 '^SKIP: ' "$logs/bun.log" || true
grep -m1 '^SKIP: containers: ' "$logs/containers.log" || true
