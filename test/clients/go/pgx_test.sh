#!/usr/bin/env bash
# pgx v4 against cosid (TAP): builds cosid_pgx.go once (build.sh, into
# $COSID_CACHE/go-clients) and runs it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${COSID_CACHE:-/var/cache/cosid}/go-clients
if ! log=$(bash "$here/build.sh" "$dir" 2>&1); then
	printf '%s\n' "$log" | sed 's/^/# /'
	echo "not ok 1 - cosid_pgx.go builds"
	echo "1..1"
	exit 1
fi
exec "$dir/cosid_pgx"
