#!/usr/bin/env bash
# Installs what the service needs (scripts/setup.sh), then what only the tests and the
# benchmarks use. Safe to run again: every step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh

# The reference tools the tests and benchmarks check outputs with or compare against: qpdf
# (--check), poppler (pdftotext, pdfinfo, pdfimages, pdffonts, pdftoppm), mupdf-tools (mutool),
# Ghostscript; Tesseract's traineddata for every OCR language offered (the ocr and ocr-lang
# benchmarks compare against them); Chromium for the web console's browser tests and to
# render the generated OCR language pages (test/support/lang-pages.ts); python3-venv for the
# Python client's tests and the ocrmypdf comparison; zip, openssl (a TLS webhook receiver),
# xmllint (libxml2-utils), time (/usr/bin/time), procps (pgrep, ps) for single tests; cjpeg
# (libjpeg-turbo-progs) writes the JPEG pages of the OCR evaluation set; the OCR language set
# (scripts/bench/ocr-lang-set.ts) is the translations in the gettext catalogs of libgtk2.0-common,
# libglib2.0-data, gsettings-desktop-schemas and libgdk-pixbuf2.0-common (LGPL) besides apt's and
# dpkg's, read at bench time by python3's gettext module.
./scripts/apt-install.sh qpdf mupdf-tools poppler-utils ghostscript chromium python3-venv \
  zip openssl libxml2-utils time procps libjpeg-turbo-progs \
  libgtk2.0-common libglib2.0-data gsettings-desktop-schemas libgdk-pixbuf2.0-common python3 \
  tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu tesseract-ocr-fra tesseract-ocr-spa tesseract-ocr-ita tesseract-ocr-por tesseract-ocr-nld tesseract-ocr-chi-sim tesseract-ocr-chi-tra tesseract-ocr-jpn tesseract-ocr-pol tesseract-ocr-ces tesseract-ocr-hun tesseract-ocr-tur tesseract-ocr-swe tesseract-ocr-dan tesseract-ocr-nor tesseract-ocr-fin tesseract-ocr-est tesseract-ocr-lav tesseract-ocr-lit tesseract-ocr-slv tesseract-ocr-hrv tesseract-ocr-cat tesseract-ocr-glg tesseract-ocr-eus tesseract-ocr-isl tesseract-ocr-gle tesseract-ocr-afr tesseract-ocr-ind tesseract-ocr-msa tesseract-ocr-lat tesseract-ocr-sqi tesseract-ocr-mlt tesseract-ocr-cym tesseract-ocr-bos tesseract-ocr-swa tesseract-ocr-fil

# Garage, the S3-compatible object store the tests run against (test/support/garage.ts).
# Built from crates.io once and kept outside the clone (about 20-40 minutes on 2 cores);
# built again whenever the cached binary is missing, so the cache is never a dependency.
GARAGE_ROOT="${GARAGE_ROOT:-/var/cache/docproc/garage}"
if ! "$GARAGE_ROOT/bin/garage" --version 2>/dev/null | grep -q "2\.5\.0"; then
  echo "setup: building garage 2.5.0 into $GARAGE_ROOT (cargo install, takes a while)"
  mkdir -p "$GARAGE_ROOT"
  cargo install --locked garage@2.5.0 --root "$GARAGE_ROOT"
fi

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

# kubernetes-validate (PyPI) for test/deploy/k8s-manifests.test.ts, in a venv outside the clone
# (a cache: made again when missing).
k8s_venv=/var/cache/docproc/venv-k8s
if ! "$k8s_venv/bin/kubernetes-validate" --version 2>/dev/null | grep -qx "1.37.0"; then
  echo "setup: installing kubernetes-validate into $k8s_venv"
  rm -rf "$k8s_venv" && mkdir -p "$(dirname "$k8s_venv")" && /usr/bin/python3 -m venv "$k8s_venv"
  "$k8s_venv/bin/pip" install --quiet "kubernetes-validate==1.37.0"
fi

# The validators of the OCR text formats (test/api/ocr-formats.test.ts, test/unit/ocr-formats.test.ts):
# hocr-spec (PyPI, MIT) checks hOCR files against the hOCR 1.2 specification, in a venv outside
# the clone (a cache: made again when missing); xmllint (above) checks ALTO files against the
# ALTO 4.3 schema that scripts/fetch-schemas.sh fetches (hash-checked) into test/schemas/.
hocr_venv=/var/cache/docproc/venv-hocr
if ! "$hocr_venv/bin/pip" show hocr-spec 2>/dev/null | grep -qx "Version: 0.2.0"; then
  echo "setup: installing hocr-spec into $hocr_venv"
  rm -rf "$hocr_venv" && mkdir -p "$(dirname "$hocr_venv")" && /usr/bin/python3 -m venv "$hocr_venv"
  "$hocr_venv/bin/pip" install --quiet "hocr-spec==0.2.0"
fi
./scripts/fetch-schemas.sh
