#!/usr/bin/env bash
# Installs the given Debian packages that are not installed yet (run by setup.sh and
# setup-test.sh). Does nothing, not even `apt-get update`, when every one is there; as a
# non-root user it names the missing ones and fails.
set -euo pipefail
missing=()
for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ]; then
  echo "setup: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "setup: please install: ${missing[*]} (sudo apt-get install ...)" >&2
  exit 1
fi
