#!/usr/bin/env bash
# Fetches the test corpus (third-party documents from public repositories) into CORPUS_DIR
# (default: <repo>/.corpus, which git ignores), so that a clone can run the whole test suite.
#
# test/corpus-manifest.tsv lists every file: its path in the corpus, its sha256, and where it
# comes from (url), or nothing where it cannot be fetched. Each file is checked against its
# sha256, which is what pins it: the URLs name the commit the file was taken from where it was
# known, but a file that changed upstream or in transit fails the check, is removed and named,
# and the script exits non-zero. Files already present with the right sha256 are kept.
#
#   url https://...           downloaded (curl)
#   url repo:<path>           copied from this repository (the corpus's own MANIFEST.tsv, README.md)
#   transform csv-text-column the downloaded CSV's text column (the 9th field onwards): the
#                             SROIE receipts' reference text
#   no url                    not fetchable (the three Tesseract test pages converted from TIFF
#                             to PNG): listed at the end; the tests that need them stay ignored
#
# CORPUS_MIRROR=/path copies every file from a local copy of the corpus instead of downloading
# (the not-fetchable ones too), with the same sha256 check.
#
# The tests find the corpus in CORPUS_DIR, else <repo>/.corpus, else ../shared/corpus beside
# the repository (crates/test_inputs.rs, test/support/corpus.ts).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${CORPUS_DIR:-$root/.corpus}"
# Relative to the repository root, as the tests read it.
[[ "$dest" == /* ]] || dest="$root/$dest"
mirror="${CORPUS_MIRROR:-}"
manifest="$root/test/corpus-manifest.tsv"
mkdir -p "$dest"

sha() { sha256sum "$1" | cut -d' ' -f1; }

fetched=0 kept=0 failed=() unfetchable=()
# A tab is whitespace to `read`, which would merge empty columns: split on \x1f instead.
while IFS=$'\x1f' read -r path sum url transform; do
  target="$dest/$path"
  if [ -f "$target" ] && [ "$(sha "$target")" = "$sum" ]; then
    kept=$((kept + 1))
    continue
  fi
  # A wrong copy goes first: a corpus missing a file is reported as missing, a wrong one is not.
  rm -f "$target"
  mkdir -p "$(dirname "$target")"
  tmp="$target.part"
  rm -f "$tmp"
  if [[ "$url" == repo:* ]]; then
    cp "$root/${url#repo:}" "$tmp"
  elif [ -n "$mirror" ]; then
    if ! cp "$mirror/$path" "$tmp" 2>/dev/null; then
      failed+=("$path (not in $mirror)")
      continue
    fi
  elif [ -z "$url" ]; then
    unfetchable+=("$path")
    continue
  elif ! curl -fsSL --retry 3 --connect-timeout 20 -o "$tmp" "$url"; then
    rm -f "$tmp"
    failed+=("$path (download failed: $url)")
    continue
  elif [ "$transform" = csv-text-column ]; then
    cut -d, -f9- "$tmp" > "$tmp.text" && mv "$tmp.text" "$tmp"
  fi
  got="$(sha "$tmp")"
  if [ "$got" != "$sum" ]; then
    rm -f "$tmp"
    failed+=("$path (sha256 $got, expected $sum)")
    continue
  fi
  mv "$tmp" "$target"
  fetched=$((fetched + 1))
done < <(awk -F'\t' 'NR > 1 { print $1 "\x1f" $2 "\x1f" $3 "\x1f" $4 }' "$manifest")

# Cargo watches this file (the build scripts' corpus check), not a directory that did not
# exist at the last build: touching it makes the next cargo test look for the corpus again.
touch "$root/crates/test_inputs.rs"

echo "corpus in $dest: $fetched fetched, $kept already there"
if [ ${#unfetchable[@]} -gt 0 ]; then
  echo "not fetchable (no public source of these bytes; copy them from a full corpus with CORPUS_MIRROR, or the tests that need them stay ignored):"
  printf '  %s\n' "${unfetchable[@]}"
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED:" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
