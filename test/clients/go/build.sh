#!/usr/bin/env bash
# Builds cosid_pgx.go into DIR/cosid_pgx with Debian's Go and pgx v4
# (golang-go, golang-github-jackc-pgx-v4-dev) in GOPATH mode, offline: the
# packages' sources in /usr/share/gocode, no modules, no proxy.  Once per
# version of the source, of Go and of the packages; Go's build cache is DIR/cache.
#
#   test/clients/go/build.sh DIR     (scripts/test.sh: $COSID_CACHE/go-clients)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
mkdir -p "$dir"
exec 9>"$dir.lock"
flock 9
sum=$({
	cat "$here/cosid_pgx.go"
	go version
	dpkg-query -W 'golang-github-jackc-*' 2>/dev/null || true
} | sha256sum | cut -c1-16)
[ -f "$dir/$sum.stamp" ] && [ -x "$dir/cosid_pgx" ] && exit 0
rm -f "$dir/cosid_pgx" "$dir"/*.stamp
export GOCACHE=$dir/cache GOFLAGS= GOPROXY=off
cd "$here"
GO111MODULE=off GOPATH=/usr/share/gocode go build -o "$dir/cosid_pgx" cosid_pgx.go
touch "$dir/$sum.stamp"
