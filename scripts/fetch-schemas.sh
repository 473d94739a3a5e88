#!/usr/bin/env bash
# Fetches the XML schemas the tests validate OCR outputs against (docs/ocr.md, "hOCR and ALTO"):
# ALTO 4.3 (alto-4-3.xsd, CC BY-SA 4.0, by the ALTO Editorial Board / Library of Congress) and
# the XLink schema it imports (xlink.xsd, from METS), as shipped in the tests of kraken 4.3.13's
# source distribution on PyPI (pinned by version and sha256; each file is checked too). The
# files go to test/schemas/ (or $SCHEMA_DIR), which git ignores; a second run does nothing.
#
# SCHEMA_MIRROR=DIR takes the tarball from a local directory instead of files.pythonhosted.org.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dest=${SCHEMA_DIR:-$root/test/schemas}
# shellcheck source=lib/fetch.sh
. "$root/scripts/lib/fetch.sh"

# package version sha256 url (sha256 as the PyPI index publishes it for that file)
pkg=kraken
ver=4.3.13
sha=e34549828fd4f3a9c08e438d1dca8cb4fc96dcacc7c3970692bdc6a43298bc5f
url=https://files.pythonhosted.org/packages/24/93/22da364f9388f07b0542c897289f478e96e2b92dbca70576442ce5aaee49/kraken-4.3.13.tar.gz

# name sha256 (path in the sdist: tests/resources/<name>)
files=(
  "alto-4-3.xsd 098067807e4d866d3652fd9ed8d3fb9cddbdda92a1dbd13e222ae5db444f2aaf"
  "xlink.xsd f1f5bb6003165cdd8f6c1fcc32f8fd1f965e1681010f3b9806d9460bcffa8a3c"
)

present() {
  for f in "${files[@]}"; do
    read -r name want <<< "$f"
    has_sha256 "$dest/$name" "$want" || return 1
  done
}

if present; then
  echo "fetch-schemas: ${#files[@]} schemas present and matching in $dest"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
path=$(pinned_archive fetch-schemas "${SCHEMA_MIRROR:-}" "$sha" "$url" "$tmp")
for f in "${files[@]}"; do
  read -r name _ <<< "$f"
  echo "$pkg-$ver/tests/resources/$name"
done > "$tmp/members"
unpack_members "$path" "$tmp/x" "$tmp/members"

mkdir -p "$dest"
for f in "${files[@]}"; do
  read -r name want <<< "$f"
  if ! has_sha256 "$tmp/x/tests/resources/$name" "$want"; then
    echo "fetch-schemas: $name in ${url##*/}: sha256 is not the pinned $want" >&2
    exit 1
  fi
  cp "$tmp/x/tests/resources/$name" "$dest/$name"
done
echo "fetch-schemas: ${#files[@]} schemas in $dest"
