#!/usr/bin/env bash
# The container test (run by scripts/test.sh): builds the images (scripts/build-images.sh),
# brings the compose stack up (deploy/compose.yaml: Postgres, Garage, migrations, the API, two
# workers), drives a job of every operation through it with the TypeScript client and SIGKILLs a
# worker container mid-job (test/deploy/compose-stack.ts), then takes the stack down with its
# volumes. Where the machine cannot run containers it prints ONE line starting "SKIP: containers:"
# and exits 0 without claiming a pass; DOCPROC_CONTAINER_TEST=0 skips it the same way.
# podman-compose comes from PyPI into a venv under /var/cache/docproc (a cache: made again when
# missing); `docker compose` is used instead when docker works and podman is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
skip() { echo "SKIP: containers: $*"; exit 0; }
[ "${DOCPROC_CONTAINER_TEST:-1}" = 0 ] && skip "DOCPROC_CONTAINER_TEST=0"
start=$(date +%s)
log() { echo "test-containers: $(( $(date +%s) - start )) s $*"; }

if command -v podman >/dev/null; then ENGINE=podman
elif command -v docker >/dev/null && docker info >/dev/null 2>&1; then ENGINE=docker
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then ENGINE=podman
else skip "neither podman nor a working docker, and not root on Debian to install podman"; fi
export ENGINE

# Can this machine run a container at all? The base image first (made from Debian packages).
BASE_ONLY=1 ./scripts/build-images.sh >/dev/null 2>&1 || skip "could not make the base image ($(BASE_ONLY=1 ./scripts/build-images.sh 2>&1 | tail -1))"
probe=$("$ENGINE" run --rm "${BASE_IMAGE:-localhost/docproc-base:bookworm}" true 2>&1) || skip "$ENGINE cannot run a container here: $(tail -1 <<<"$probe")"

garage_bin="${GARAGE_BIN:-${GARAGE_ROOT:-/var/cache/docproc/garage}/bin/garage}"
[ -x "$garage_bin" ] || skip "no Garage binary at $garage_bin (scripts/setup-test.sh builds it)"

if [ "$ENGINE" = podman ]; then
  venv=/var/cache/docproc/podman-compose
  if ! "$venv/bin/podman-compose" --version >/dev/null 2>&1; then
    log "installing podman-compose from PyPI into $venv"
    rm -rf "$venv" && python3 -m venv "$venv" && "$venv/bin/pip" install --quiet "podman-compose==1.6.0"
  fi
  compose=("$venv/bin/podman-compose")
else
  compose=(docker compose)
fi

log "building the images"
./scripts/build-images.sh 2>&1 | grep -E '^build-images:|Error|error:' || true
[ "${PIPESTATUS[0]}" = 0 ] || { echo "test-containers: scripts/build-images.sh failed" >&2; exit 1; }

work=$(mktemp -d)
project="docproc-ct-$$"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# Test settings on top of fresh secrets: short leases so a killed worker's job is retried soon,
# and a per-page delay so that a job is still running when its worker is killed.
{ ./deploy/make-env.sh; printf 'JOB_LEASE_S=5\nQUEUE_POLL_MS=500\nJOB_TEST_PAGE_DELAY_MS=400\n'; } > "$work/docproc.env"
export DOCPROC_ENV_FILE="$work/docproc.env" DOCPROC_PORT="$port"
c() { "${compose[@]}" -p "$project" -f deploy/compose.yaml "$@"; }
container() { "$ENGINE" ps -q --filter "label=com.docker.compose.project=$project" --filter "label=com.docker.compose.service=$1" | head -1; }
# The containers' anonymous volumes (the image's DATA_DIR), which `down -v` may leave behind.
anon_volumes() { "$ENGINE" ps -aq --filter "label=com.docker.compose.project=$project" | xargs -r "$ENGINE" inspect --format '{{range .Mounts}}{{if eq .Type "volume"}}{{.Name}} {{end}}{{end}}' | tr ' ' '\n' | grep -E '^[0-9a-f]{64}$' || true; }
down() {
  log "compose down"
  local anon; anon=$(anon_volumes)
  c down -v --remove-orphans -t 20 >"$work/down.log" 2>&1 || { echo "test-containers: compose down failed:" >&2; tail -20 "$work/down.log" >&2; return 1; }
  [ -z "$anon" ] || "$ENGINE" volume rm $anon >/dev/null 2>&1 || true
  left=$("$ENGINE" ps -aq --filter "label=com.docker.compose.project=$project" | wc -l)
  [ "$left" = 0 ] || { echo "test-containers: $left containers left after down" >&2; return 1; }
  # podman-compose 1.6 with podman 4.3 may leave the named volumes after `down -v`.
  { "$ENGINE" volume ls -q | grep "^${project}_" || true; } | xargs -r "$ENGINE" volume rm >/dev/null
}
cleanup() {
  local rc=$?
  if [ $rc != 0 ]; then
    echo "test-containers: FAILED; the stack's logs:" >&2
    for s in migrate api worker garage postgres; do id=$(container "$s" || true); [ -n "$id" ] && { echo "--- $s" >&2; "$ENGINE" logs --tail 40 "$id" >&2 2>&1 || true; }; done
    anon=$(anon_volumes)
    c down -v --remove-orphans -t 5 >/dev/null 2>&1 || true
    [ -z "$anon" ] || "$ENGINE" volume rm $anon >/dev/null 2>&1 || true
    { "$ENGINE" volume ls -q | grep "^${project}_" || true; } | xargs -r "$ENGINE" volume rm >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
  exit $rc
}
trap cleanup EXIT

log "compose up (2 workers) on 127.0.0.1:$port"
c up -d --scale worker=2 >"$work/up.log" 2>&1 || { tail -30 "$work/up.log" >&2; exit 1; }
for i in $(seq 1 180); do
  curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  [ "$i" = 180 ] && { echo "test-containers: the API never became ready" >&2; exit 1; }
  sleep 1
done
log "API ready"

api=$(container api)
admin() { "$ENGINE" exec "$api" docproc admin "$@"; }
account=$(admin account:create --email ops@example.com | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
keys=()
for _ in 1 2 3 4 5 6 7 8; do keys+=("$(admin key:create --account "$account" --mode test | python3 -c 'import json,sys; print(json.load(sys.stdin)["key"])')"); done
live=$(admin key:create --account "$account" --mode live | python3 -c 'import json,sys; print(json.load(sys.stdin)["key"])')

DOCPROC_URL="http://127.0.0.1:$port/api/v1" DOCPROC_KEYS="$(IFS=,; echo "${keys[*]}")" DOCPROC_LIVE_KEY="$live" \
  CONTAINER_ENGINE="$ENGINE" PG_CONTAINER="$(container postgres)" bun test/deploy/compose-stack.ts
# Memory of each container after every operation ran (the figure deploy/k8s sizes workers by).
"$ENGINE" stats --no-stream --format '{{.Name}} {{.MemUsage}}' $("$ENGINE" ps -q --filter "label=com.docker.compose.project=$project") 2>/dev/null \
  | sed 's/^/test-containers: memory: /' || true

# The Kubernetes manifests, smoke-run with `podman kube play` on the stack's network (podman only;
# docker has no kube play): the API and worker Deployments as rendered, with the env file as their
# Secret; the API pod answers /readyz (Postgres and Garage reachable) and a job runs on its worker.
if [ "$ENGINE" = podman ] && command -v kubectl >/dev/null && python3 -c 'import yaml' 2>/dev/null; then
  kube="$work/kube"; mkdir -p "$kube"
  kubectl kustomize deploy/k8s | python3 deploy/k8s/smoke/podman-kube-play.py "$work/docproc.env" "$kube"
  net=$("$ENGINE" network ls --format '{{.Name}}' | grep -x "${project}_default" || true)
  [ -n "$net" ] || { echo "test-containers: no network ${project}_default" >&2; exit 1; }
  "$ENGINE" stop -t 20 $("$ENGINE" ps -q --filter "label=com.docker.compose.project=$project" --filter "label=com.docker.compose.service=worker") >/dev/null
  kube_down() { for role in api worker; do "$ENGINE" kube play --down "$kube/$role.yaml" >/dev/null 2>&1 || true; "$ENGINE" pod rm -f "docproc-$role-pod-0" >/dev/null 2>&1 || true; done; }
  for role in api worker; do
    "$ENGINE" kube play --network "$net" --configmap "$kube/configmap-secret.yaml" --configmap "$kube/configmap-settings.yaml" "$kube/$role.yaml" >/dev/null \
      || { kube_down; echo "test-containers: podman kube play $role.yaml failed" >&2; exit 1; }
  done
  for i in $(seq 1 60); do
    "$ENGINE" exec docproc-api-pod-0-api bun -e 'const r = await fetch("http://127.0.0.1:8080/readyz"); process.exit(r.ok ? 0 : 1)' >/dev/null 2>&1 && break
    [ "$i" = 60 ] && { kube_down; echo "test-containers: the kube-played API pod never became ready" >&2; exit 1; }
    sleep 1
  done
  "$ENGINE" exec docproc-worker-pod-0-worker docproc healthcheck || { kube_down; echo "test-containers: the kube-played worker is not healthy" >&2; exit 1; }
  # A job through the compose API, run by the kube-played worker (the compose workers are stopped).
  DOCPROC_URL="http://127.0.0.1:$port/api/v1" DOCPROC_KEY="${keys[0]}" bun -e '
    import { Client } from "./clients/typescript/src/index";
    import { tinyPdf } from "./test/support/pdf";
    const c = new Client({ apiKey: process.env.DOCPROC_KEY!, baseUrl: process.env.DOCPROC_URL! });
    const f = await c.files.upload(new Blob([tinyPdf(1)], { type: "application/pdf" }), "kube.pdf");
    const { job } = await c.jobs.run({ operation: "rotate", file_id: f.id, options: { degrees: 90 } } as any, { timeout: 120_000 });
    if (job.status !== "succeeded") process.exit(1);' || { kube_down; echo "test-containers: no job ran on the kube-played worker" >&2; exit 1; }
  kube_down
  log "podman kube play: the API pod ready, a job run by the worker pod"
else
  echo "test-containers: podman kube play smoke not run (needs podman, kubectl and python3-yaml)"
fi

down
log "passed: the compose stack ran a job of every operation, survived a worker SIGKILL and came down cleanly"
