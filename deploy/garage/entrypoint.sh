#!/bin/sh
# A one-node Garage: writes its config from the environment, starts the server, and (every start,
# idempotently) assigns the layout, imports S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY, creates
# S3_BUCKET and grants the key on it; /var/lib/garage/ready marks it done (the HEALTHCHECK).
set -eu
: "${S3_ACCESS_KEY_ID:?}" "${S3_SECRET_ACCESS_KEY:?}" "${S3_BUCKET:?}" "${GARAGE_RPC_SECRET:?}"
dir=/var/lib/garage
cfg="$dir/garage.toml"
rm -f "$dir/ready"
cat > "$cfg" <<CONF
metadata_dir = "$dir/meta"
data_dir = "$dir/data"
db_engine = "sqlite"
replication_factor = 1
rpc_bind_addr = "[::]:3901"
rpc_public_addr = "127.0.0.1:3901"
rpc_secret = "$GARAGE_RPC_SECRET"

[s3_api]
s3_region = "${S3_REGION:-garage}"
api_bind_addr = "[::]:3900"
root_domain = ".s3.garage.localhost"

[admin]
api_bind_addr = "127.0.0.1:3903"
CONF
chmod 600 "$cfg"
g() { garage -c "$cfg" "$@"; }
retry() { i=0; until "$@" >/dev/null 2>&1; do i=$((i + 1)); [ $i -lt 120 ] || { echo "garage-entrypoint: $* failed" >&2; "$@"; return 1; }; sleep 0.5; done; }
RUST_LOG="${RUST_LOG:-warn}" garage -c "$cfg" server &
server=$!
trap 'kill -TERM $server 2>/dev/null' TERM INT
retry g node id -q
node=$(g node id -q | cut -d@ -f1)
if ! g layout show 2>/dev/null | grep -q "$(echo "$node" | cut -c1-16)"; then
  retry g layout assign -z dc1 -c 10G "$node"
  retry g layout apply --version 1
fi
g key info "$S3_ACCESS_KEY_ID" >/dev/null 2>&1 || retry g key import --yes -n docproc "$S3_ACCESS_KEY_ID" "$S3_SECRET_ACCESS_KEY"
g bucket info "$S3_BUCKET" >/dev/null 2>&1 || retry g bucket create "$S3_BUCKET"
retry g bucket allow --read --write --owner "$S3_BUCKET" --key "$S3_ACCESS_KEY_ID"
touch "$dir/ready"
echo "garage-entrypoint: ready (bucket $S3_BUCKET)"
wait $server
