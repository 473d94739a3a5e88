#!/bin/sh
# Prints a fresh env file for deploy/compose.yaml with random secrets:
#   ./deploy/make-env.sh > deploy/docproc.env && chmod 600 deploy/docproc.env
# Settings from the README's Configuration table may be added to it (e.g. FILE_TTL_S).
set -eu
hex() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }
pg=$(hex 24)
cat <<ENV
# docproc compose stack: secrets (generated $(date -u +%F)); keep this file private.
POSTGRES_USER=docproc
POSTGRES_PASSWORD=$pg
POSTGRES_DB=docproc
DATABASE_URL=postgres://docproc:$pg@postgres:5432/docproc
S3_ENDPOINT=http://garage:3900
S3_BUCKET=docproc
S3_REGION=garage
S3_ACCESS_KEY_ID=GK$(hex 12)
S3_SECRET_ACCESS_KEY=$(hex 32)
GARAGE_RPC_SECRET=$(hex 32)
WEBHOOK_SECRET_KEY=$(hex 32)
METRICS_TOKEN=$(hex 16)
ENV
