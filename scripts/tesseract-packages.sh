#!/usr/bin/env bash
# Prints the Debian packages of Tesseract's traineddata to install, one a line: the default set
# (scripts/tesseract-languages.txt) and those OCR_EXTRA_LANGUAGES adds (Tesseract codes separated
# by spaces or commas, `chi_sim`, `amh`, or Debian's script names, `script-cyrl`). Run by
# scripts/setup.sh and by deploy/Containerfile's runtime stage.
set -euo pipefail
list="$(dirname "$0")/tesseract-languages.txt"
extra="${OCR_EXTRA_LANGUAGES:-}"
for code in $(grep -v '^#' "$list") ${extra//,/ }; do
  echo "tesseract-ocr-$(tr '[:upper:]_' '[:lower:]-' <<<"$code")"
done
