# Sourced (not run) by the scripts that fetch pinned archives from a registry and unpack some of
# their files: scripts/fetch-schemas.sh and scripts/fetch-eval.sh. Each keeps its own table of
# URLs and sha256s; this file holds what they do with them.

# sha256_of FILE: prints the file's sha256.
sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# has_sha256 FILE SHA: whether FILE is there and its sha256 is SHA.
has_sha256() { [ -f "$1" ] && [ "$(sha256_of "$1")" = "$2" ]; }

# pinned_archive WHO MIRROR SHA URL DIR: prints the path of the archive URL names, checked
# against SHA: MIRROR's file of the same name when MIRROR is set and has one, else a download
# into DIR. Exits (naming WHO) when the sha256 differs.
pinned_archive() {
  local who=$1 mirror=$2 sha=$3 url=$4 dir=$5
  local file=${url##*/} path
  if [ -n "$mirror" ] && [ -f "$mirror/$file" ]; then
    path=$mirror/$file
  else
    path=$dir/$file
    echo "$who: downloading $file" >&2
    curl -fsSL --retry 3 -o "$path" "$url"
  fi
  if ! has_sha256 "$path" "$sha"; then
    echo "$who: $path: sha256 is not the pinned $sha" >&2
    exit 1
  fi
  echo "$path"
}

# unpack_members ARCHIVE DIR LIST: extracts the members of the .tar.gz ARCHIVE listed in the
# file LIST (one path a line, as the archive names them) into DIR, without their top folder.
unpack_members() {
  mkdir -p "$2"
  tar -xzf "$1" -C "$2" --strip-components=1 --verbatim-files-from -T "$3"
}
