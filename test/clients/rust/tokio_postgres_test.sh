#!/usr/bin/env bash
# tokio-postgres against cosid (TAP): builds src/main.rs once (build.sh, into
# $COSID_CACHE/rust-clients) and runs it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${COSID_CACHE:-/var/cache/cosid}/rust-clients
if ! log=$(bash "$here/build.sh" "$dir" 2>&1); then
	printf '%s\n' "$log" | sed 's/^/# /'
	echo "not ok 1 - the tokio-postgres program builds"
	echo "1..1"
	exit 1
fi
exec "$dir/cosid-tokio-postgres"
