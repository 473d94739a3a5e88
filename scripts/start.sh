#!/usr/bin/env bash
# Installs what the service needs (scripts/setup.sh; the test tools are scripts/setup-test.sh),
# builds and starts it on its defaults: http://127.0.0.1:8080/api/v1 with an embedded Postgres
# under ./.data (see README, Configuration).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
exec bun run start "$@"
